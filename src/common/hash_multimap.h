// A multimap from 64-bit hashes to small values in one flat array (open
// addressing, linear probing, backward-shift deletion): the size of a
// (hash, value) pair an entry, where a node-based container adds 40 bytes
// of node and allocator overhead. For indexes whose keys are hashed by the
// caller, who checks what it finds (two keys of one hash both answer).
// HashMultiset is the value-less case: 8 bytes an entry.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace fk {

namespace hash_table {
// Where a hash starts probing in a table of `slots` (a power of two). The
// hashes given may be weak in their low bits (std::hash of an integer is the
// integer): mixed first (MurmurHash3's finalizer).
inline size_t Home(uint64_t hash, size_t slots) {
  hash ^= hash >> 33;
  hash *= 0xff51afd7ed558ccdULL;
  hash ^= hash >> 33;
  return static_cast<size_t>(hash) & (slots - 1);
}
// 0 marks an empty slot, so a hash of 0 is stored as 1 (the two are then
// one key: both answer, neither is lost).
inline uint64_t Stored(uint64_t hash) { return hash == 0 ? 1 : hash; }
}  // namespace hash_table

template <class V>
class HashMultimap {
 public:
  void Insert(uint64_t hash, V value) {
    if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
    Place(Slot{hash_table::Stored(hash), std::move(value)});
    ++size_;
  }
  // Removes one entry (hash, value); false if there is none.
  bool Erase(uint64_t hash, const V& value) {
    if (slots_.empty()) return false;
    const uint64_t h = hash_table::Stored(hash);
    size_t i = hash_table::Home(h, slots_.size());
    while (!(slots_[i].hash == h && slots_[i].value == value)) {
      if (slots_[i].hash == 0) return false;
      i = Next(i);
    }
    ShiftInto(i);
    --size_;
    return true;
  }
  // Calls fn(value) for every entry of `hash`.
  template <class Fn>
  void ForEach(uint64_t hash, Fn&& fn) const {
    if (slots_.empty()) return;
    const uint64_t h = hash_table::Stored(hash);
    for (size_t i = hash_table::Home(h, slots_.size()); slots_[i].hash != 0; i = Next(i)) {
      if (slots_[i].hash == h) fn(slots_[i].value);
    }
  }
  // Calls fn(hash, value) for every entry, in no order.
  template <class Fn>
  void ForEachEntry(Fn&& fn) const {
    for (const Slot& s : slots_) {
      if (s.hash != 0) fn(s.hash, s.value);
    }
  }
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

 private:
  struct Slot {
    uint64_t hash = 0;  // 0: empty
    [[no_unique_address]] V value{};
  };

  size_t Next(size_t i) const { return (i + 1) & (slots_.size() - 1); }

  void Place(Slot slot) {
    size_t i = hash_table::Home(slot.hash, slots_.size());
    while (slots_[i].hash != 0) i = Next(i);
    slots_[i] = std::move(slot);
  }

  void Grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.empty() ? 16 : old.size() * 2);
    for (Slot& s : old) {
      if (s.hash != 0) Place(std::move(s));
    }
  }

  // Backward-shift deletion of slot `hole`: every later entry of its run that
  // may live in the hole (its home is not cyclically in (hole, j]) moves into
  // it, so a probe never stops early at a hole and no tombstones pile up.
  void ShiftInto(size_t hole) {
    for (size_t j = Next(hole); slots_[j].hash != 0; j = Next(j)) {
      const size_t home = hash_table::Home(slots_[j].hash, slots_.size());
      const bool stays = hole < j ? (hole < home && home <= j) : (hole < home || home <= j);
      if (stays) continue;
      slots_[hole] = std::move(slots_[j]);
      hole = j;
    }
    slots_[hole] = Slot{};
  }

  std::vector<Slot> slots_;  // a power of two, at most 3/4 full
  size_t size_ = 0;
};

// How many times each hash was inserted (and not erased).
class HashMultiset {
 public:
  void Insert(uint64_t hash) { map_.Insert(hash, {}); }
  bool Erase(uint64_t hash) { return map_.Erase(hash, {}); }
  size_t Count(uint64_t hash) const {
    size_t n = 0;
    map_.ForEach(hash, [&](const Nothing&) { ++n; });
    return n;
  }
  size_t size() const { return map_.size(); }
  size_t capacity() const { return map_.capacity(); }

 private:
  struct Nothing {
    bool operator==(const Nothing&) const = default;
  };
  HashMultimap<Nothing> map_;
};

}  // namespace fk
