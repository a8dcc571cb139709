#include "common/packed_optional.h"

#include <gtest/gtest.h>

#include <optional>
#include <sstream>

#include "domain/decision.h"
#include "domain/digest.h"

namespace fk {
namespace {

using Opt = PackedOptional<int64_t>;

TEST(PackedOptionalTest, IsTheSizeOfItsValue) {
  EXPECT_EQ(sizeof(Opt), sizeof(int64_t));
  EXPECT_EQ(sizeof(PackedOptional<domain::ObservedDigest>), sizeof(domain::ObservedDigest));
}

// A journal record keeps every sandbox's latest decision: absent is a
// verdict no decision takes, and the note is a pointer, so the optional
// decision is 24 bytes (an std::optional<Decision> with an std::string
// note was 56).
TEST(PackedOptionalTest, AnAbsentDecisionIsAVerdictNoDecisionTakes) {
  EXPECT_EQ(sizeof(PackedOptional<domain::Decision>), 24u);
  PackedOptional<domain::Decision> d;
  EXPECT_FALSE(d.has_value());
  domain::Decision healthy;  // every real verdict, kIgnore (0) included, is a value
  healthy.verdict = domain::Verdict::kIgnore;
  d = healthy;
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->verdict, domain::Verdict::kIgnore);
  EXPECT_TRUE(d->note.empty());
  domain::Decision held{domain::Verdict::kHold, domain::Reason::kFenceAltered,
                        domain::Action::kNone, "already fail-closed", std::nullopt};
  d = held;
  EXPECT_EQ(d->note, "already fail-closed");
  EXPECT_TRUE(d == held);
  d.reset();
  EXPECT_FALSE(d.has_value());
  EXPECT_TRUE(d == std::optional<domain::Decision>());
}

TEST(PackedOptionalTest, ReadsAsAnOptional) {
  Opt o;
  EXPECT_FALSE(o.has_value());
  EXPECT_FALSE(o);
  EXPECT_EQ(o.value_or(7), 7);
  EXPECT_THROW((void)o.value(), std::bad_optional_access);
  o = 0;  // zero is a value, not absence
  ASSERT_TRUE(o.has_value());
  EXPECT_EQ(*o, 0);
  o = -5;
  EXPECT_EQ(o.value(), -5);
  o.reset();
  EXPECT_FALSE(o.has_value());
}

TEST(PackedOptionalTest, ComparesAsAnOptionalDoes) {
  const std::optional<int64_t> none, three = 3;
  const Opt packed_none, packed_three = 3;
  // Both orders, against an std::optional: two absent values are equal.
  EXPECT_TRUE(packed_none == none);
  EXPECT_TRUE(none == packed_none);
  EXPECT_TRUE(packed_three == three);
  EXPECT_TRUE(three == packed_three);
  EXPECT_FALSE(packed_none == three);
  EXPECT_FALSE(three == packed_none);
  EXPECT_FALSE(packed_three == none);
  EXPECT_TRUE(packed_three == int64_t{3});
  EXPECT_FALSE(packed_none == int64_t{3});
  EXPECT_TRUE(packed_none == std::nullopt);
  EXPECT_FALSE(packed_three == std::nullopt);
  EXPECT_NE(packed_three, Opt(4));
}

TEST(PackedOptionalTest, ConvertsBothWays) {
  const std::optional<int64_t> from = 9;
  const Opt packed = from;
  const std::optional<int64_t> back = packed;
  EXPECT_EQ(back, from);
  const std::optional<int64_t> none = Opt();
  EXPECT_FALSE(none.has_value());
  std::ostringstream out;
  out << packed << " " << Opt();
  EXPECT_EQ(out.str(), "9 (nullopt)");
}

TEST(PackedOptionalTest, ADigestIsAbsentOnlyAtItsNiche) {
  PackedOptional<domain::ObservedDigest> d;
  EXPECT_FALSE(d.has_value());
  domain::ObservedDigest at_zero;  // observed at the epoch: still a digest
  d = at_zero;
  EXPECT_TRUE(d.has_value());
  EXPECT_EQ(d->observed_at_ms, 0);
}

}  // namespace
}  // namespace fk
