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
    LabelSet a = LabelSet::Of({{"b", "2"}, {"a", "1"}});
    LabelSet b = LabelSet::Of({{"a", "1"}, {"b", "2"}});
    LabelSet c = LabelSet::Of({{"a", "1"}});
    EXPECT_EQ(a, b);
    EXPECT_FALSE(a == c);
    EXPECT_EQ(LabelSet::InternedCount(), before + 2);
    EXPECT_EQ(a.Get("b"), "2");
    EXPECT_EQ(a.Get("c"), std::nullopt);
    EXPECT_EQ(a.items(), (LabelSet::Items{{"a", "1"}, {"b", "2"}}));
  }
  EXPECT_EQ(LabelSet::InternedCount(), before);  // freed with the last handle
}

TEST(LabelSet, ARepeatedKeyKeepsItsLastValueAndAnEmptyValueIsAValue) {
  LabelSet s = LabelSet::Of({{"role", "supervisor"}, {"empty", ""}, {"role", "workload"}});
  EXPECT_EQ(s.Get("role"), "workload");
  EXPECT_EQ(s.Get("empty"), "");
  EXPECT_TRUE(LabelSet::Of({}).empty());
  EXPECT_EQ(LabelSet::Of({}).Get("x"), std::nullopt);
}

TEST(LabelSet, ANulCannotBreakThePacking) {
  LabelSet s =
      LabelSet::Of({{std::string("a\0b", 3), "1"}, {"c", std::string("x\0y", 3)}, {"d", "4"}});
  EXPECT_EQ(s.items(), (LabelSet::Items{{"d", "4"}}));
}

TEST(LabelSet, CopiesOnManyThreadsFreeTheSetOnceAfterTheLast) {
  const size_t before = LabelSet::InternedCount();
  {
    const LabelSet shared = LabelSet::Of({{"k", "v"}});
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 2000; ++i) {
          LabelSet copy = shared;
          LabelSet again = LabelSet::Of({{"k", "v"}});
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
