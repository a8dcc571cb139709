// SortedNames (common/sorted_names.h), the flat map of the object stores and
// the fences' generations: it must behave as the std::map<std::string, V> it
// replaced — the same entries, in the same order, whatever order they came
// in, found by text or packed name, and still so after erases shrank it.
#include "common/sorted_names.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace fk {
namespace {

// Names of every kind CompactString keeps: inline, a canonical uid, a long
// one on the heap, an empty one, and names that share long prefixes.
std::vector<std::string> Names() {
  std::vector<std::string> out = {"",
                                  "a",
                                  "b",
                                  "ns-0042-sb-00007",
                                  "ns-0042-sb-00008",
                                  "0f8c2d3e-1a2b-4c3d-8e9f-001122334455",
                                  "0F8C2D3E-1A2B-4C3D-8E9F-001122334455"};
  const std::string long_name(100, 'x');
  for (int i = 0; i < 40; ++i) out.push_back(long_name + std::to_string(i));
  for (int i = 0; i < 200; ++i) out.push_back("sb-" + std::to_string(i * 7919 % 1000));
  return out;
}

std::vector<std::pair<std::string, int>> Entries(const SortedNames<int>& m) {
  std::vector<std::pair<std::string, int>> out;
  for (const auto& [name, v] : m) out.emplace_back(name.str(), v);
  return out;
}

std::vector<std::pair<std::string, int>> Entries(const std::map<std::string, int>& m) {
  return {m.begin(), m.end()};
}

TEST(SortedNamesTest, HoldsAndOrdersWhatAStdMapWould) {
  std::vector<std::string> names = Names();
  std::shuffle(names.begin(), names.end(), std::mt19937(36));
  SortedNames<int> flat;
  std::map<std::string, int> map;
  for (size_t i = 0; i < names.size(); ++i) {
    const int v = static_cast<int>(i);
    EXPECT_EQ(flat.try_emplace(names[i], v).second, map.try_emplace(names[i], v).second)
        << names[i];
  }
  EXPECT_EQ(flat.size(), map.size());
  EXPECT_EQ(Entries(flat), Entries(map));
  for (const auto& [name, v] : map) {
    ASSERT_NE(flat.find(std::string_view(name)), flat.end()) << name;
    EXPECT_EQ(flat.find(name)->second, v);
    EXPECT_EQ(flat.find(CompactString(name))->second, v);
  }
  EXPECT_EQ(flat.find(std::string_view("not-there")), flat.end());
  EXPECT_EQ(flat.find(std::string(100, 'x')), flat.end());  // a prefix of held names
}

TEST(SortedNamesTest, AnEntryHeldIsNotReplacedAndIndexingAddsZero) {
  SortedNames<int> m;
  EXPECT_TRUE(m.try_emplace("uid-1", 3).second);
  const auto [it, added] = m.try_emplace("uid-1", 5);
  EXPECT_FALSE(added);
  EXPECT_EQ(it->second, 3);
  EXPECT_EQ(m["uid-2"], 0);
  m["uid-2"] = 7;
  m["uid-1"] = std::max(m["uid-1"], 2);
  EXPECT_EQ(Entries(m), (std::vector<std::pair<std::string, int>>{{"uid-1", 3}, {"uid-2", 7}}));
}

TEST(SortedNamesTest, ErasingKeepsTheRestInOrderAndGivesMemoryBack) {
  std::vector<std::string> names = Names();
  SortedNames<int> flat;
  std::map<std::string, int> map;
  for (size_t i = 0; i < names.size(); ++i) {
    flat.try_emplace(names[i], static_cast<int>(i));
    map.try_emplace(names[i], static_cast<int>(i));
  }
  const size_t full = flat.capacity();
  std::mt19937 random(7);
  while (map.size() > 3) {
    auto victim = std::next(map.begin(), static_cast<long>(random() % map.size()));
    auto it = flat.find(victim->first);
    ASSERT_NE(it, flat.end());
    auto next = flat.erase(it);
    auto map_next = map.erase(victim);
    // The iterator returned is the entry after the one erased, as a map's.
    if (map_next == map.end()) {
      EXPECT_EQ(next, flat.end());
    } else {
      EXPECT_EQ(next->first, map_next->first);
    }
    ASSERT_EQ(Entries(flat), Entries(map));
  }
  EXPECT_LT(flat.capacity(), full / 4);
  flat.shrink_to_fit();
  EXPECT_EQ(flat.capacity(), flat.size());
  EXPECT_EQ(Entries(flat), Entries(map));
}

// As std::map's try_emplace: a held name leaves the value offered as it was
// (the store swaps a modified object in with it).
TEST(SortedNamesTest, AHeldNameLeavesTheValueOfferedAlone) {
  SortedNames<std::unique_ptr<int>> m;
  auto first = std::make_unique<int>(1), second = std::make_unique<int>(2);
  EXPECT_TRUE(m.try_emplace("a", std::move(first)).second);
  EXPECT_FALSE(m.try_emplace("a", std::move(second)).second);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(*second, 2);
  EXPECT_EQ(*m.find(std::string_view("a"))->second, 1);
}

// A full array grows by an eighth (at least 4), so one object added to a
// store of 20,000 reserves room for 2,500 more at most, not 20,000.
TEST(SortedNamesTest, AFullArrayGrowsByAnEighth) {
  SortedNames<int> m;
  for (int i = 0; i < 4000; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "sb-%05d", (i * 7919) % 4000);  // out of order
    m.try_emplace(name, i);
    ASSERT_LE(m.capacity(), m.size() + std::max<size_t>(4, m.size() / 8)) << i;
  }
  EXPECT_EQ(m.size(), 4000u);
  EXPECT_EQ(m.begin()->first, "sb-00000");
}

}  // namespace
}  // namespace fk
