// The controller's work queue (reconciler/work_queue.h) on a manual clock:
// a key is queued once however often it is added, never handed to two
// workers at once (re-added while processed, it comes back after Done),
// delayed keys fall due on the time source, failures back off exponentially
// up to the cap (or the server's Retry-After, itself capped), Forget resets
// that, a resync leaves a key in backoff or in progress alone, and ShutDown
// ends every Get.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "common/backoff.h"
#include "common/clock.h"
#include "reconciler/sandbox_controller.h"
#include "reconciler/work_queue.h"

namespace fk::reconciler {
namespace {
using namespace std::chrono_literals;

ObjectKey Key(const char* name) { return {"ns", name}; }

// Every key due now, in the order handed out, each marked done.
std::vector<std::string> DrainDue(WorkQueue& q) {
  std::vector<std::string> out;
  while (auto key = q.TryGet()) {
    out.push_back(key->ToString());
    q.Done(*key);
  }
  return out;
}

// The delay AddRateLimited chose for `key`, on a manual clock.
std::chrono::milliseconds NextDelay(WorkQueue& q, ManualTimeSource& time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(*q.NextDue() - time.MonotonicNow());
}

// Takes the key once it is due (advancing the clock to it), as a worker would.
void TakeWhenDue(WorkQueue& q, ManualTimeSource& time, const ObjectKey& key) {
  time.Advance(NextDelay(q, time));
  ASSERT_EQ(q.TryGet(), key);
  q.Done(key);
}

// The queue keeps its keys packed (inline up to 22 characters, on the heap
// past it): any name comes back as it was added, names that share a long
// prefix stay apart, and a key is still queued once however it was spelled.
TEST(WorkQueueTest, KeysOfAnyLengthComeBackAsTheyWereAdded) {
  ManualTimeSource time;
  WorkQueue q(time);
  const std::string long_name(300, 'x');
  const std::vector<ObjectKey> keys = {{"ns-0042", "ns-0042-sb-00007"},
                                       {"a-namespace-of-thirty-chars-00", long_name + "1"},
                                       {"a-namespace-of-thirty-chars-00", long_name},
                                       {"", "empty-namespace"},
                                       {"ns", ""}};
  for (const ObjectKey& k : keys) q.Add(k);
  q.Add({"a-namespace-of-thirty-chars-00", long_name});
  EXPECT_EQ(q.Depth(), keys.size());
  for (const ObjectKey& k : keys) {
    const auto got = q.TryGet();
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(*got, k);
    q.Add(k);  // re-added while processed: back after Done, still once
    q.Add(k);
    q.Done(*got);
  }
  EXPECT_EQ(q.Depth(), keys.size());
  q.AddRateLimited(keys[1]);  // a failing long key backs off under its own name
  EXPECT_EQ(NextDelay(q, time), 5ms);
  q.Forget(keys[1]);
}

TEST(WorkQueueTest, AKeyAddedTwiceIsQueuedOnceAndKeysComeOutInOrder) {
  ManualTimeSource time;
  WorkQueue q(time);
  q.Add(Key("a"));
  q.Add(Key("b"));
  q.Add(Key("a"));
  EXPECT_EQ(q.Depth(), 2u);
  EXPECT_EQ(DrainDue(q), (std::vector<std::string>{"ns/a", "ns/b"}));
  EXPECT_EQ(q.Depth(), 0u);
  EXPECT_EQ(q.TryGet(), std::nullopt);
}

// client-go's dirty set: a key re-added while a worker has it is not handed
// to a second worker; it is queued again (once) when the first says Done.
TEST(WorkQueueTest, AKeyReAddedWhileProcessedComesBackOnceAfterDone) {
  ManualTimeSource time;
  WorkQueue q(time);
  q.Add(Key("a"));
  ASSERT_EQ(q.TryGet(), Key("a"));
  q.Add(Key("a"));
  q.Add(Key("a"));
  EXPECT_EQ(q.Depth(), 0u);             // waiting for Done, not in the queue
  EXPECT_EQ(q.TryGet(), std::nullopt);  // never to a second worker
  q.Done(Key("a"));
  EXPECT_EQ(q.Depth(), 1u);
  EXPECT_EQ(q.TryGet(), Key("a"));
  EXPECT_EQ(q.TryGet(), std::nullopt);  // once, however often it was re-added
  q.Done(Key("a"));
  EXPECT_EQ(q.TryGet(), std::nullopt);  // Done without a re-add queues nothing
}

TEST(WorkQueueTest, ADelayedKeyFallsDueOnTheTimeSource) {
  ManualTimeSource time;
  WorkQueue q(time);
  EXPECT_EQ(q.NextDue(), std::nullopt);
  q.AddAfter(Key("a"), 100ms);
  EXPECT_EQ(NextDelay(q, time), 100ms);
  EXPECT_EQ(q.TryGet(), std::nullopt);
  time.Advance(99ms);
  EXPECT_EQ(q.TryGet(), std::nullopt);
  time.Advance(1ms);
  EXPECT_EQ(DrainDue(q), std::vector<std::string>{"ns/a"});
  EXPECT_EQ(q.NextDue(), std::nullopt);
  // No delay at all is an Add.
  q.AddAfter(Key("b"), 0ms);
  EXPECT_EQ(q.NextDue(), std::nullopt);
  EXPECT_EQ(DrainDue(q), std::vector<std::string>{"ns/b"});
}

TEST(WorkQueueTest, OfTwoDelaysForOneKeyTheEarlierHolds) {
  ManualTimeSource time;
  WorkQueue q(time);
  q.AddAfter(Key("a"), 50ms);
  q.AddAfter(Key("a"), 200ms);  // later: ignored
  EXPECT_EQ(NextDelay(q, time), 50ms);
  q.AddAfter(Key("a"), 10ms);  // earlier: replaces it
  EXPECT_EQ(NextDelay(q, time), 10ms);
  time.Advance(10ms);
  EXPECT_EQ(DrainDue(q), std::vector<std::string>{"ns/a"});
  EXPECT_EQ(q.NextDue(), std::nullopt);  // the 50 ms one is gone too
}

// docs/design.md#growth-with-changes-not-time: a key that keeps failing (a
// refused PATCH) is retried with a backoff that grows to 5 minutes and stays there — with the
// controller's defaults, which were capped at 60 s (a refused PATCH every minute, forever).
TEST(Bounded, ThePerKeyBackoffSaturatesAtFiveMinutes) {
  ManualTimeSource time;
  const SandboxControllerOptions defaults;
  WorkQueue q(time, defaults.retry_base, defaults.retry_max);
  std::vector<std::chrono::milliseconds> delays;
  for (int i = 0; i < 16; ++i) {
    q.AddRateLimited(Key("a"));
    delays.push_back(NextDelay(q, time));
    TakeWhenDue(q, time, Key("a"));
  }
  const std::vector<std::chrono::milliseconds> expected = {
      50ms,    100ms,   200ms,   400ms,    800ms,    1600ms,   3200ms,   6400ms,
      12800ms, 25600ms, 51200ms, 102400ms, 204800ms, 300000ms, 300000ms, 300000ms};
  EXPECT_EQ(delays, expected);
  q.Forget(Key("a"));  // a success starts over
  q.AddRateLimited(Key("a"));
  EXPECT_EQ(NextDelay(q, time), 50ms);
}

// A server's Retry-After is honoured when longer than the backoff, but never
// more than a minute; a shorter one does not shorten the backoff.
TEST(Bounded, ARetryAfterOfAnHourRequeuesAfterAMinute) {
  ManualTimeSource time;
  WorkQueue q(time, 50ms, 300s);
  q.AddRateLimited(Key("a"), 3600);
  EXPECT_EQ(NextDelay(q, time), 60s);
  TakeWhenDue(q, time, Key("a"));
  q.AddRateLimited(Key("a"), 2);
  EXPECT_EQ(NextDelay(q, time), 2s);
  EXPECT_EQ(RetryAfterDelay(-5), 0ms);
  EXPECT_EQ(RetryAfterDelay(61), 60s);
}

// Each key's failures set its own backoff; Forget starts it from the base again.
TEST(WorkQueueTest, FailuresAreCountedPerKeyAndForgetClearsThem) {
  ManualTimeSource time;
  WorkQueue q(time, 10ms, 80ms);
  q.AddRateLimited(Key("a"));
  TakeWhenDue(q, time, Key("a"));
  q.AddRateLimited(Key("a"));  // a's second failure
  EXPECT_EQ(NextDelay(q, time), 20ms);
  TakeWhenDue(q, time, Key("a"));
  q.AddRateLimited(Key("b"));  // another key starts at the base
  EXPECT_EQ(NextDelay(q, time), 10ms);
  TakeWhenDue(q, time, Key("b"));
  q.Forget(Key("a"));
  q.AddRateLimited(Key("a"));  // forgotten: from the base again
  EXPECT_EQ(NextDelay(q, time), 10ms);
  TakeWhenDue(q, time, Key("a"));
  q.AddRateLimited(Key("b"));  // b's second failure: b was not forgotten
  EXPECT_EQ(NextDelay(q, time), 20ms);
}

TEST(WorkQueueTest, ARetryAfterShorterThanTheBackoffDoesNotShortenIt) {
  ManualTimeSource time;
  WorkQueue q(time, 10s, 300s);
  q.AddRateLimited(Key("a"), 1);
  EXPECT_EQ(NextDelay(q, time), 10s);
}

TEST(WorkQueueTest, AResyncLeavesAKeyInBackoffOrInProgressAlone) {
  ManualTimeSource time;
  WorkQueue q(time, 1s, 60s);
  q.AddRateLimited(Key("a"));
  q.Resync(Key("a"));
  EXPECT_EQ(q.TryGet(), std::nullopt);  // its backoff is not cut short
  q.Resync(Key("b"));
  ASSERT_EQ(q.TryGet(), Key("b"));
  q.Resync(Key("b"));  // in progress: not queued again
  q.Done(Key("b"));
  EXPECT_EQ(q.TryGet(), std::nullopt);
  // A change is an Add: it is looked at at once, backoff or not.
  q.Add(Key("a"));
  EXPECT_EQ(DrainDue(q), std::vector<std::string>{"ns/a"});
  time.Advance(1s);  // the delayed entry falls due later still
  EXPECT_EQ(DrainDue(q), std::vector<std::string>{"ns/a"});
}

TEST(WorkQueueTest, GetWaitsForAKeyAndShutDownEndsIt) {
  ManualTimeSource time;
  WorkQueue q(time);
  auto first = std::async(std::launch::async, [&] { return q.Get(); });
  q.Add(Key("a"));
  ASSERT_EQ(first.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(first.get(), Key("a"));
  auto waiting = std::async(std::launch::async, [&] { return q.Get(); });
  q.ShutDown();
  ASSERT_EQ(waiting.wait_for(10s), std::future_status::ready);
  EXPECT_EQ(waiting.get(), std::nullopt);
  // Shut down: nothing more is queued or handed out.
  q.Add(Key("b"));
  q.AddAfter(Key("c"), 1ms);
  time.Advance(1ms);
  EXPECT_EQ(q.TryGet(), std::nullopt);
  EXPECT_EQ(q.Get(), std::nullopt);
  EXPECT_EQ(q.NextDue(), std::nullopt);
  // Nor is a key that was waiting when it shut down.
  WorkQueue waiting_key(time);
  waiting_key.Add(Key("d"));
  waiting_key.ShutDown();
  EXPECT_EQ(waiting_key.TryGet(), std::nullopt);
  EXPECT_EQ(waiting_key.Get(), std::nullopt);
}

}  // namespace
}  // namespace fk::reconciler
