// LabelSet: labels interned, so equal sets share one copy, and a set is
// freed with its last handle (a warm pod churn must not grow the table).
#include "common/label_set.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace fk {
namespace {

TEST(LabelSet, EqualSetsShareOneCopyWhateverTheOrder) {
  const size_t before = LabelSet::InternedCount();
  {
    LabelSet a = LabelSet::Of({{"b", "2"}, {"a", "1"}}, "");
    LabelSet b = LabelSet::Of({{"a", "1"}, {"b", "2"}}, "");
    LabelSet c = LabelSet::Of({{"a", "1"}}, "");
    EXPECT_EQ(a, b);
    EXPECT_FALSE(a == c);
    EXPECT_EQ(LabelSet::InternedCount(), before + 2);
    EXPECT_EQ(a.Get("b", ""), "2");
    EXPECT_EQ(a.Get("c", ""), std::nullopt);
    EXPECT_EQ(a.items(""), (LabelSet::Items{{"a", "1"}, {"b", "2"}}));
  }
  EXPECT_EQ(LabelSet::InternedCount(), before);  // freed with the last handle
}

TEST(LabelSet, ARepeatedKeyKeepsItsLastValueAndAnEmptyValueIsAValue) {
  LabelSet s = LabelSet::Of({{"role", "supervisor"}, {"empty", ""}, {"role", "workload"}}, "");
  EXPECT_EQ(s.Get("role", ""), "workload");
  EXPECT_EQ(s.Get("empty", ""), "");
  EXPECT_TRUE(LabelSet::Of({}, "").empty());
  EXPECT_EQ(LabelSet::Of({}, "").Get("x", ""), std::nullopt);
}

// Every workload pod carries its own sandbox's id, usually its own name: kept
// as a reference to the owner's name, the sets of two such pods are one copy,
// and each reads back exactly, with its own name.
TEST(LabelSet, AValueThatIsItsOwnersNameIsSharedAndReadBackExactly) {
  const size_t before = LabelSet::InternedCount();
  {
    LabelSet a = LabelSet::Of({{"pair", "sb-1"}, {"role", "workload"}}, "sb-1");
    LabelSet b = LabelSet::Of({{"pair", "sb-2"}, {"role", "workload"}}, "sb-2");
    EXPECT_EQ(a, b);
    EXPECT_EQ(LabelSet::InternedCount(), before + 1);
    EXPECT_EQ(a.Get("pair", "sb-1"), "sb-1");
    EXPECT_EQ(b.items("sb-2"), (LabelSet::Items{{"pair", "sb-2"}, {"role", "workload"}}));
    // A value that only resembles the owner, or an owner's name elsewhere,
    // is text: only an equal value is a reference.
    LabelSet c = LabelSet::Of({{"pair", "sb-10"}, {"role", "workload"}}, "sb-1");
    EXPECT_FALSE(c == a);
    EXPECT_EQ(c.Get("pair", "sb-1"), "sb-10");
    // Without an owner nothing is a reference, not even an empty value.
    LabelSet d = LabelSet::Of({{"pair", "sb-1"}, {"empty", ""}}, "");
    EXPECT_EQ(d.items("x"), (LabelSet::Items{{"empty", ""}, {"pair", "sb-1"}}));
  }
  EXPECT_EQ(LabelSet::InternedCount(), before);
}

// The reference is tagged, so no value can spell one: a value "*" (what a
// reference is stored as) stays the text "*".
TEST(LabelSet, NoValueReadsAsAReference) {
  LabelSet s = LabelSet::Of({{"a", "*"}, {"b", "=x"}, {"c", "owner"}}, "owner");
  EXPECT_EQ(s.items("other"), (LabelSet::Items{{"a", "*"}, {"b", "=x"}, {"c", "other"}}));
  EXPECT_EQ(s.Get("a", "owner"), "*");
}

TEST(LabelSet, ANulCannotBreakThePacking) {
  LabelSet s =
      LabelSet::Of({{std::string("a\0b", 3), "1"}, {"c", std::string("x\0y", 3)}, {"d", "4"}}, "");
  EXPECT_EQ(s.items(""), (LabelSet::Items{{"d", "4"}}));
}

TEST(LabelSet, CopiesOnManyThreadsFreeTheSetOnceAfterTheLast) {
  const size_t before = LabelSet::InternedCount();
  {
    const LabelSet shared = LabelSet::Of({{"k", "v"}}, "");
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 2000; ++i) {
          LabelSet copy = shared;
          LabelSet again = LabelSet::Of({{"k", "v"}}, "");
          EXPECT_EQ(copy, again);
        }
      });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(LabelSet::InternedCount(), before + 1);
  }
  EXPECT_EQ(LabelSet::InternedCount(), before);
}

}  // namespace
}  // namespace fk
