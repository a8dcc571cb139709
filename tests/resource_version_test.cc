#include "kube/resource_version.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace fk::kube {
namespace {

const std::vector<std::string> kSamples = {"",
                                           "0",
                                           "1",
                                           "4711",
                                           "100123",
                                           "9223372036854775807",  // numbers up to 2^63 - 1
                                           "9223372036854775808",  // 2^63: kept as text
                                           "18446744073709551616",
                                           "007",
                                           "00",
                                           "-1",
                                           "+1",
                                           "1 ",
                                           "x1",
                                           "abc",
                                           "12345678901234567890123"};

TEST(ResourceVersion, SpellsEveryTextBackAsItWasGiven) {
  for (const std::string& text : kSamples) {
    const ResourceVersion rv(text);
    EXPECT_EQ(rv.str(), text);
    EXPECT_EQ(rv.empty(), text.empty()) << text;
    EXPECT_TRUE(rv == text) << text;
  }
}

TEST(ResourceVersion, EqualExactlyWhenTheTextsAre) {
  for (const std::string& a : kSamples) {
    for (const std::string& b : kSamples) {
      EXPECT_EQ(ResourceVersion(a) == ResourceVersion(b), a == b) << a << " vs " << b;
    }
  }
}

TEST(ResourceVersion, CopiesAndMovesKeepTheText) {
  for (const std::string& text : kSamples) {
    ResourceVersion a(text);
    ResourceVersion copy(a);
    EXPECT_EQ(copy.str(), text);
    ResourceVersion assigned("5");
    assigned = copy;
    EXPECT_EQ(assigned.str(), text);
    ResourceVersion moved(std::move(a));
    EXPECT_EQ(moved.str(), text);
    ResourceVersion target("text");
    target = std::move(moved);
    EXPECT_EQ(target.str(), text);
    target = target;  // NOLINT: self-assignment is safe
    EXPECT_EQ(target.str(), text);
  }
}

}  // namespace
}  // namespace fk::kube
