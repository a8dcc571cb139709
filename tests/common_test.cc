// The small units of src/common that everything else leans on: Go-style
// durations, backoff delays and timestamp formatting.
#include <gtest/gtest.h>

#include <random>

#include "common/backoff.h"
#include "common/clock.h"
#include "common/duration.h"
#include "common/utf8_cut.h"

namespace fk {
namespace {

TEST(Utf8Prefix, CutsOnACharacterBoundary) {
  const std::string text = "ab\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80";  // a b é 中 😀
  const size_t ends[] = {0, 1, 2, 2, 4, 4, 4, 7, 7, 7, 7, 11};        // the cut for each budget
  for (size_t max = 0; max < std::size(ends); ++max)
    EXPECT_EQ(Utf8Prefix(text, max).size(), ends[max]) << max;
  EXPECT_EQ(Utf8Prefix(text, 100), text);
  // Bytes that are not UTF-8 are cut where asked.
  EXPECT_EQ(Utf8Prefix("\x80\x80\x80\x80\x80", 3).size(), 3u);
}

TEST(Duration, ParsesGoStyleDurations) {
  using namespace std::chrono_literals;
  EXPECT_EQ(ParseDuration("200ms"), 200ms);
  EXPECT_EQ(ParseDuration("30s"), 30s);
  EXPECT_EQ(ParseDuration("5m"), 5min);
  EXPECT_EQ(ParseDuration("1h30m"), 90min);
  EXPECT_EQ(ParseDuration("1.5s"), 1500ms);
  EXPECT_EQ(ParseDuration("0"), 0ms);
  for (const char* bad : {"", "5", "s", "5x", "-1s", "1.2.3s", "ms5"})
    EXPECT_EQ(ParseDuration(bad), std::nullopt) << bad;
}

TEST(Backoff, DoublesUpToTheCapAndJitterStaysWithinOneStep) {
  using namespace std::chrono_literals;
  EXPECT_EQ(ExponentialDelay(5ms, 0, 1000ms), 5ms);
  EXPECT_EQ(ExponentialDelay(5ms, 3, 1000ms), 40ms);
  EXPECT_EQ(ExponentialDelay(5ms, 10, 1000ms), 1000ms);
  EXPECT_EQ(ExponentialDelay(5ms, 500, 1000ms), 1000ms);  // no overflow for large attempts
  std::mt19937 rng(7);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const auto d = JitteredDelay(100ms, attempt, 30000ms, rng);
    EXPECT_GE(d, ExponentialDelay(100ms, attempt, 30000ms));
    EXPECT_LT(d, 2 * ExponentialDelay(100ms, attempt, 30000ms));
  }
}

TEST(Clock, MicroTimeHasSixFractionalDigits) {
  const auto t =
      std::chrono::system_clock::from_time_t(1'800'000'000) + std::chrono::microseconds(123456);
  EXPECT_EQ(FormatMicroTime(t), "2027-01-15T08:00:00.123456Z");
  EXPECT_EQ(FormatRfc3339(t), "2027-01-15T08:00:00.123Z");
}

}  // namespace
}  // namespace fk
