// A map from names to values in one sorted array (a flat map): the size of
// a (CompactString, value) pair an entry, where a std::map node adds 32
// bytes of links and 8 of allocator header. Iterated in name order, as a
// std::map<std::string, V> is; searched by text or by packed name.
//
// An insert or erase in the middle moves the entries after it (memmove: 32
// bytes an entry for a pointer value, some tens of microseconds at 20,000);
// names added in order (as the API server lists them) are appended. A full
// array grows by an eighth (at least 4 entries), not by half or double as a
// std::vector does: at 20,000 pods one added object would otherwise reserve
// room for thousands more (still amortized constant: geometric growth). An
// iterator or reference is invalidated by any insert or erase, as a
// std::vector's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "common/compact_string.h"

namespace fk {

template <class V>
class SortedNames {
 public:
  using value_type = std::pair<CompactString, V>;
  using iterator = typename std::vector<value_type>::iterator;
  using const_iterator = typename std::vector<value_type>::const_iterator;

  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // What the entries take, for the memory they keep.
  size_t capacity() const { return entries_.capacity(); }

  template <class Key>
  iterator find(const Key& name) {
    auto it = LowerBound(entries_, name);
    return it != entries_.end() && it->first == name ? it : entries_.end();
  }
  template <class Key>
  const_iterator find(const Key& name) const {
    auto it = LowerBound(entries_, name);
    return it != entries_.end() && it->first == name ? it : entries_.end();
  }
  // Adds (name, V(args...)) unless name is held; the entry, and whether it
  // was added. As std::map's: nothing is moved from `args` when name is held.
  template <class... Args>
  std::pair<iterator, bool> try_emplace(std::string_view name, Args&&... args) {
    auto it = entries_.empty() || entries_.back().first < name ? entries_.end()  // in order
                                                               : LowerBound(entries_, name);
    if (it != entries_.end() && it->first == name) return {it, false};
    if (entries_.size() == entries_.capacity()) {
      const auto at = it - entries_.begin();
      entries_.reserve(entries_.size() + std::max<size_t>(4, entries_.size() / 8));
      it = entries_.begin() + at;
    }
    it = entries_.emplace(it, std::piecewise_construct, std::forward_as_tuple(name),
                          std::forward_as_tuple(std::forward<Args>(args)...));
    return {it, true};
  }
  // The value under name, added (value-initialized) if it is not held.
  V& operator[](std::string_view name) { return try_emplace(name).first->second; }
  iterator erase(const_iterator it) {
    auto next = entries_.erase(it);
    // A table that shrank to a quarter of what it holds gives the rest back.
    if (entries_.capacity() > 16 && entries_.size() * 4 < entries_.capacity())
      return Shrink(next - entries_.begin());
    return next;
  }
  // Gives back what the array holds beyond its entries (after a listing).
  void shrink_to_fit() { entries_.shrink_to_fit(); }

  bool operator==(const SortedNames& o) const { return entries_ == o.entries_; }

 private:
  template <class Entries, class Key>
  static auto LowerBound(Entries& entries, const Key& name) {
    return std::lower_bound(entries.begin(), entries.end(), name,
                            [](const value_type& e, const Key& n) { return e.first < n; });
  }
  iterator Shrink(std::ptrdiff_t at) {
    entries_.shrink_to_fit();
    return entries_.begin() + at;
  }

  std::vector<value_type> entries_;
};

}  // namespace fk
