#include "common/hash_multimap.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace fk {
namespace {

TEST(HashMultiset, CountsEachEntryAndErasesOneAtATime) {
  HashMultiset set;
  EXPECT_EQ(set.Count(7), 0u);
  EXPECT_FALSE(set.Erase(7));
  set.Insert(7);
  set.Insert(7);
  set.Insert(0);  // stored as 1: counted with 1, never lost
  EXPECT_EQ(set.Count(7), 2u);
  EXPECT_EQ(set.Count(0), 1u);
  EXPECT_EQ(set.Count(1), 1u);
  EXPECT_EQ(set.size(), 3u);
  EXPECT_TRUE(set.Erase(7));
  EXPECT_EQ(set.Count(7), 1u);
  EXPECT_TRUE(set.Erase(0));
  EXPECT_EQ(set.Count(0), 0u);
  EXPECT_EQ(set.size(), 1u);
}

// Entries whose homes crowd one region, erased in every order, with the table
// wrapping around its end: the backward shift must keep every later entry of
// a run findable. Checked against std::map after every step.
TEST(HashMultiset, AgreesWithAMapThroughRandomInsertsAndErases) {
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 rng(seed);
    HashMultiset set;
    std::map<uint64_t, size_t> expected;
    // Few distinct values (many duplicates and collisions of homes).
    std::uniform_int_distribution<uint64_t> value(1, 300);
    for (int step = 0; step < 4000; ++step) {
      const uint64_t v = value(rng);
      if (rng() % 3 != 0) {
        set.Insert(v);
        ++expected[v];
      } else {
        const bool had = expected[v] > 0;
        EXPECT_EQ(set.Erase(v), had) << "seed " << seed << " step " << step;
        if (had) --expected[v];
      }
      ASSERT_EQ(set.Count(v), expected[v]) << "seed " << seed << " step " << step;
    }
    size_t total = 0;
    for (const auto& [v, n] : expected) {
      ASSERT_EQ(set.Count(v), n) << "seed " << seed << " value " << v;
      total += n;
    }
    EXPECT_EQ(set.size(), total);
  }
}

TEST(HashMultiset, StaysAtMostThreeQuartersFull) {
  HashMultiset set;
  for (uint64_t v = 1; v <= 10000; ++v) set.Insert(v);
  EXPECT_EQ(set.size(), 10000u);
  EXPECT_LE(set.size() * 4, set.capacity() * 3);
  EXPECT_EQ(set.capacity(), 16384u);  // 8 bytes an entry, 13 at most with the slack
  for (uint64_t v = 1; v <= 10000; ++v) ASSERT_EQ(set.Count(v), 1u) << v;
}

}  // namespace
}  // namespace fk
