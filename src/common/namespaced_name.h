// An object's namespace and name, packed (common/compact_string.h): the one
// key of an object, wherever it is kept (the caches' stores, the work queue
// and the reconciler's work items, the journal's index of sandboxes by
// name). As two std::strings, with a 16-character namespace on the heap,
// such a key would cost about 100 bytes.
// Ordered as the pair of strings is.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "common/compact_string.h"

namespace fk {

// The hash of a namespace and a name, as the flat indexes key them (a pod's
// sandbox, the journal's uids by name). One function, so an index and the
// code that probes it can never disagree.
inline uint64_t HashOfName(std::string_view ns, std::string_view name) {
  const std::hash<std::string_view> h;
  return h(ns) * 1000003u ^ h(name);
}

struct NamespacedName {
  NamespacedName(std::string_view ns, std::string_view name) : ns(ns), name(name) {}
  NamespacedName(CompactString ns, CompactString name) : ns(std::move(ns)), name(std::move(name)) {}
  std::pair<std::string, std::string> Unpacked() const { return {ns.str(), name.str()}; }
  std::string ToString() const { return ns.str() + "/" + name.str(); }  // as logs spell it
  bool operator==(const NamespacedName&) const = default;
  std::strong_ordering operator<=>(const NamespacedName&) const = default;
  CompactString ns, name;
};

}  // namespace fk
