#include "common/hash_multiset.h"

namespace fk {

size_t HashMultiset::Home(uint64_t stored) const {
  // The hashes given may be weak in their low bits (std::hash of an integer
  // is the integer): mixed first (the finalizer of MurmurHash3).
  uint64_t x = stored;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return static_cast<size_t>(x) & (slots_.size() - 1);
}

void HashMultiset::Grow() {
  std::vector<uint64_t> old;
  old.swap(slots_);
  slots_.assign(old.empty() ? 16 : old.size() * 2, 0);
  size_ = 0;
  for (uint64_t v : old) {
    if (v != 0) Insert(v);
  }
}

void HashMultiset::Insert(uint64_t hash) {
  if ((size_ + 1) * 4 > slots_.size() * 3) Grow();
  const uint64_t v = Stored(hash);
  size_t i = Home(v);
  while (slots_[i] != 0) i = (i + 1) & (slots_.size() - 1);
  slots_[i] = v;
  ++size_;
}

size_t HashMultiset::Count(uint64_t hash) const {
  if (slots_.empty()) return 0;
  const uint64_t v = Stored(hash);
  size_t n = 0;
  for (size_t i = Home(v); slots_[i] != 0; i = (i + 1) & (slots_.size() - 1)) n += slots_[i] == v;
  return n;
}

bool HashMultiset::Erase(uint64_t hash) {
  if (slots_.empty()) return false;
  const size_t mask = slots_.size() - 1;
  const uint64_t v = Stored(hash);
  size_t i = Home(v);
  while (slots_[i] != v) {
    if (slots_[i] == 0) return false;
    i = (i + 1) & mask;
  }
  // Backward-shift deletion: every later entry of the run that may live in
  // the hole (its home is not cyclically in (hole, j]) moves into it, so a
  // probe never stops early at a hole and no tombstones accumulate.
  size_t hole = i;
  for (size_t j = (hole + 1) & mask; slots_[j] != 0; j = (j + 1) & mask) {
    const size_t home = Home(slots_[j]);
    const bool stays = hole < j ? (hole < home && home <= j) : (hole < home || home <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = 0;
  --size_;
  return true;
}

}  // namespace fk
