// Objects and list bodies built to be hostile (docs/design.md#bad-objects-stay-local):
// nesting, names, resourceVersions, list pages and watch events, for the
// tests of the decoders, the informers and the controller under bad input.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace fk::testing {

// `depth` nested objects around `leaf`: Nest(2, "1") is {"a":{"a":1}}.
inline std::string Nest(int depth, const std::string& leaf = "1") {
  std::string s;
  s.reserve(static_cast<size_t>(depth) * 6 + leaf.size() + static_cast<size_t>(depth));
  for (int i = 0; i < depth; ++i) s += "{\"a\":";
  s += leaf;
  s.append(static_cast<size_t>(depth), '}');
  return s;
}

// An object whose metadata comes first, then `rest` (e.g. ,"spec":...).
inline std::string Item(const std::string& name, const std::string& rest = "",
                        const std::string& rv = "7") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"u-)" + name +
         R"(","resourceVersion":")" + rv + R"("})" + rest + "}";
}

// An object `depth` levels deep in all (the root, then spec nesting).
inline std::string DeepItem(const std::string& name, int depth, const std::string& rv = "7") {
  return Item(name, ",\"spec\":" + Nest(depth - 1), rv);
}

inline std::string ListBody(const std::vector<std::string>& items,
                            const std::string& meta = R"({"resourceVersion":"42"})") {
  std::string s = R"({"kind":"SandboxList","apiVersion":"agents.x-k8s.io/v1beta1","metadata":)" +
                  meta + R"(,"items":[)";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ",\n " : "") + items[i];
  return s + "]}";
}

inline std::string Event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}";
}

// Whether `s` is valid UTF-8 (no overlong forms or surrogates checked: a cut
// only ever leaves a truncated sequence).
inline bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// 300 two-byte characters after `pad`: any cut at an odd offset splits one.
inline std::string Accents(const std::string& pad) {
  std::string s = pad;
  for (int i = 0; i < 300; ++i) s += "\xc3\xa9";
  return s;
}

// Loads a scenario (YAML) into `sim`.
inline Status Load(sim::Simulator& sim, const std::string& yaml) {
  auto sc = sim::ParseScenario(yaml, "test scenario");
  if (!sc.ok()) return sc.status();
  return sim::ApplyScenario(sim, *sc);
}

}  // namespace fk::testing
