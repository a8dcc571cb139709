// A multiset of 64-bit hashes in one flat array (open addressing, linear
// probing): 8 bytes an entry where a node-based container takes 40 to 48.
// For indexes that only need "how many entries hash to h?" — the pod index
// keeps one entry per pod a sandbox names this way (issue 20: its nodes were
// 100 bytes of every sandbox at 10,000).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fk {

class HashMultiset {
 public:
  void Insert(uint64_t hash);
  // Removes one entry equal to `hash`; false if there is none.
  bool Erase(uint64_t hash);
  size_t Count(uint64_t hash) const;
  size_t size() const { return size_; }
  size_t capacity() const { return slots_.size(); }

 private:
  // 0 marks an empty slot, so a hash of 0 is stored as 1 (a collision of
  // two values only makes both counted, never lost).
  static uint64_t Stored(uint64_t hash) { return hash == 0 ? 1 : hash; }
  size_t Home(uint64_t stored) const;
  void Grow();

  std::vector<uint64_t> slots_;  // a power of two, at most 3/4 full
  size_t size_ = 0;
};

}  // namespace fk
