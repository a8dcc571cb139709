// An object's namespace and name, packed (common/compact_string.h): the key
// of what is kept per object for a long time (the caches' stores, the
// journal's index of sandboxes by name). As two std::strings, with a
// 16-character namespace on the heap, such a key cost about 100 bytes.
// Ordered as the pair of strings is.
#pragma once

#include <compare>
#include <string>
#include <string_view>
#include <utility>

#include "common/compact_string.h"

namespace fk {

struct NamespacedName {
  NamespacedName(std::string_view ns, std::string_view name) : ns(ns), name(name) {}
  NamespacedName(CompactString ns, CompactString name) : ns(std::move(ns)), name(std::move(name)) {}
  std::pair<std::string, std::string> Unpacked() const { return {ns.str(), name.str()}; }
  bool operator==(const NamespacedName&) const = default;
  std::strong_ordering operator<=>(const NamespacedName&) const = default;
  CompactString ns, name;
};

}  // namespace fk
