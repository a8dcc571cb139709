// The generic controller loop (reconciler/controller.h) over a recording
// reconciler: the mappers decide which keys a change queues, a result decides
// when a key comes back, the reconciler hears when the queue runs dry and
// when the controller stops. Nothing here is about sandboxes.
#include "reconciler/controller.h"

#include <gtest/gtest.h>

#include <mutex>

#include "map_cache.h"
#include "metric_sample.h"
#include "reconciler/metrics.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
using namespace std::chrono_literals;

// Records every call; answers every pass with `answer`.
class RecordingReconciler final : public Reconciler {
 public:
  ReconcileResult Reconcile(const ObjectKey& key) override {
    std::lock_guard lock(mu_);
    seen_.push_back(key.ToString());
    if (throws > 0) {
      --throws;
      throw std::runtime_error("a bug in the pass");
    }
    return answer;
  }
  std::vector<ObjectKey> KeysAtStart() override { return start_keys; }
  void Idle() override { ++idles; }
  void Cancel() override { ++cancels; }

  std::vector<std::string> seen() const {
    std::lock_guard lock(mu_);
    return seen_;
  }

  ReconcileResult answer = ReconcileResult::Done();
  int throws = 0;  // the next passes that throw instead of answering
  std::vector<ObjectKey> start_keys;
  std::atomic<int> idles{0}, cancels{0};

 private:
  mutable std::mutex mu_;
  std::vector<std::string> seen_;
};

class ControllerLoopTest : public ::testing::Test {
 protected:
  ControllerLoopTest() {
    options_.time = &time_;
    // A pod concerns the two objects that depend on it; policies have no mapper.
    mappers_[CacheKind::kSandboxes] = [](const std::string& ns, const std::string& name) {
      return std::vector<ObjectKey>{{ns, name}};
    };
    mappers_[CacheKind::kPods] = [](const std::string& ns, const std::string& pod) {
      return pod == "shared" ? std::vector<ObjectKey>{{ns, "a"}, {ns, "b"}}
                             : std::vector<ObjectKey>{};
    };
  }
  // Works every key due now; how many.
  int Drain(Controller& c) {
    int n = 0;
    while (c.ProcessNextWorkItem(/*block=*/false)) ++n;
    return n;
  }

  ManualTimeSource time_;
  fk::testing::MapCache cache_;
  RecordingReconciler reconciler_;
  std::map<CacheKind, KeyMapper> mappers_;
  Controller::Options options_;
};

TEST_F(ControllerLoopTest, TheMappersSayWhichKeysAChangeQueuesAndIdleFollowsTheLastItem) {
  Controller c(cache_, reconciler_, mappers_, options_, nullptr);
  c.OnChange(CacheKind::kPods, "ns", "shared");
  c.OnChange(CacheKind::kSandboxes, "ns", "a");   // already queued: once
  c.OnChange(CacheKind::kPolicies, "ns", "any");  // no mapper: nothing
  c.OnChange(CacheKind::kPods, "ns", "unrelated");
  EXPECT_EQ(Drain(c), 2);
  EXPECT_EQ(reconciler_.seen(), (std::vector<std::string>{"ns/a", "ns/b"}));
  EXPECT_EQ(reconciler_.idles, 1);  // not after "ns/a": "ns/b" was still waiting
}

// A resync pass queues the keys its owner names (the sandbox controller:
// every cached sandbox); the loop itself asks the cache for none.
TEST_F(ControllerLoopTest, AResyncQueuesTheKeysItsOwnerNamesAndNoneWithoutThem) {
  {
    Controller c(cache_, reconciler_, mappers_, options_, nullptr);
    c.EnqueueAll();
    EXPECT_EQ(Drain(c), 0);  // no resync keys: nothing
  }
  options_.resync_keys = [] { return std::vector<ObjectKey>{{"ns", "x"}, {"other", "y"}}; };
  Controller c(cache_, reconciler_, mappers_, options_, nullptr);
  c.EnqueueAll();
  EXPECT_EQ(Drain(c), 2);
  EXPECT_EQ(reconciler_.seen(), (std::vector<std::string>{"ns/x", "other/y"}));
}

TEST_F(ControllerLoopTest, AKeyComesBackAsItsResultAsks) {
  Controller c(cache_, reconciler_, mappers_, options_, nullptr);
  reconciler_.answer = ReconcileResult::Retry();
  c.OnChange(CacheKind::kSandboxes, "ns", "a");
  EXPECT_EQ(Drain(c), 1);
  ASSERT_TRUE(c.queue().NextDue().has_value());
  EXPECT_EQ(*c.queue().NextDue() - time_.MonotonicNow(), options_.retry_base);

  reconciler_.answer = ReconcileResult::After(5s);
  time_.Advance(options_.retry_base);
  EXPECT_EQ(Drain(c), 1);
  ASSERT_TRUE(c.queue().NextDue().has_value());
  EXPECT_EQ(*c.queue().NextDue() - time_.MonotonicNow(), 5s);

  reconciler_.answer = ReconcileResult::Done();
  time_.Advance(5s);
  EXPECT_EQ(Drain(c), 1);
  EXPECT_FALSE(c.queue().NextDue().has_value());  // done: nothing comes back
  EXPECT_EQ(reconciler_.seen().size(), 3u);
}

TEST_F(ControllerLoopTest, APassThatThrowsIsAnErrorRetriedWithBackoffAndTheLoopGoesOn) {
  Metrics metrics;
  Controller c(cache_, reconciler_, mappers_, options_, &metrics);
  reconciler_.throws = 1;
  c.OnChange(CacheKind::kSandboxes, "ns", "a");
  c.OnChange(CacheKind::kSandboxes, "ns", "b");
  EXPECT_EQ(Drain(c), 2);  // "ns/a" threw; "ns/b" was still worked
  ASSERT_TRUE(c.queue().NextDue().has_value());
  EXPECT_EQ(*c.queue().NextDue() - time_.MonotonicNow(), options_.retry_base);
  EXPECT_EQ(fk::testing::Sample(metrics, "fencekeeper_reconcile_panics_total"), 1);
  EXPECT_EQ(fk::testing::Sample(
                metrics, "controller_runtime_reconcile_panics_total{controller=\"sandbox\"}"),
            1);
  EXPECT_EQ(fk::testing::Sample(metrics, "fencekeeper_reconcile_errors_total"), 1);

  time_.Advance(options_.retry_base);
  EXPECT_EQ(Drain(c), 1);  // back, and done this time
  EXPECT_EQ(reconciler_.seen(), (std::vector<std::string>{"ns/a", "ns/b", "ns/a"}));
  EXPECT_FALSE(c.queue().NextDue().has_value());
}

TEST_F(ControllerLoopTest, StartWorksTheStartKeysAndStopCancelsTheReconcilerOnce) {
  reconciler_.start_keys = {{"ns", "left-by-a-crash"}};
  Controller c(cache_, reconciler_, mappers_, options_, nullptr);
  c.Start();
  ASSERT_TRUE(fk::testing::Eventually([&] { return !reconciler_.seen().empty(); }));
  EXPECT_EQ(reconciler_.seen().front(), "ns/left-by-a-crash");
  c.Stop();
  c.Stop();  // idempotent
  EXPECT_EQ(reconciler_.cancels, 1);
}

}  // namespace
}  // namespace fk::reconciler
