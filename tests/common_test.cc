// The small units of src/common that everything else leans on: Go-style
// durations, backoff delays and timestamp formatting.
#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

#include "common/backoff.h"
#include "common/clock.h"
#include "common/duration.h"
#include "common/random_id.h"
#include "common/utf8.h"

namespace fk {
namespace {

TEST(Utf8, ValidTextIsKeptAndEachInvalidByteBecomesOneReplacement) {
  EXPECT_EQ(ValidUtf8("plain é 中 \xF0\x9F\x98\x80"), "plain é 中 \xF0\x9F\x98\x80");
  EXPECT_EQ(ValidUtf8("a\xff"), "a\xEF\xBF\xBD");
  EXPECT_EQ(ValidUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong '/'
  EXPECT_EQ(ValidUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  EXPECT_EQ(ValidUtf8("cut \xE2\x82"), "cut \xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(ValidUtf8("\x80\xBF\xF8 x \xF4\x90\x80\x80")));
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // beyond U+10FFFF
}

TEST(WriterId, Is128RandomBitsAsHexAndDiffersPerDraw) {
  const std::string a = NewWriterId(), b = NewWriterId();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(a, b);
}

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

// SleepFor moves a manual clock (the caller is the one driving it);
// WaitUntil waits for someone else to, and an interrupt ends it early.
TEST(Clock, AManualWaitUntilWaitsForTheClockAndNeverMovesIt) {
  using std::chrono::seconds;
  ManualTimeSource time;
  Interrupt never;
  ASSERT_TRUE(time.SleepFor(seconds(5), never));
  EXPECT_EQ(time.MonotonicNow().time_since_epoch(), seconds(5));

  std::atomic<int> waited{-1};
  const MonoTime due = time.MonotonicNow() + seconds(30);
  std::thread waiter([&] { waited = time.WaitUntil(due, never) ? 1 : 0; });
  time.Advance(seconds(29));
  EXPECT_EQ(waited.load(), -1);  // 1 s short: still waiting
  time.Advance(seconds(1));
  waiter.join();
  EXPECT_EQ(waited.load(), 1);
  EXPECT_EQ(time.MonotonicNow().time_since_epoch(), seconds(35));
  EXPECT_TRUE(time.WaitUntil(due, never));  // already there: at once

  Interrupt stop;
  std::thread stopped([&] { waited = time.WaitUntil(due + std::chrono::hours(1), stop) ? 1 : 0; });
  stop.Fire();
  stopped.join();
  EXPECT_EQ(waited.load(), 0);
  EXPECT_FALSE(time.WaitUntil(due + std::chrono::hours(1), stop));  // already fired: at once
  EXPECT_EQ(time.MonotonicNow().time_since_epoch(), seconds(35));
}

}  // namespace
}  // namespace fk
