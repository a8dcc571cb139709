// Issue 9, "bounded everything": an Interrupt's hooks cut calls short, and
// one sandbox whose pending intent cannot be resolved (its reads
// hang) does not hold up the others at start-up. Manual time throughout.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "fake_transport.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "kube/json_fields.h"
#include "map_cache.h"
#include "reconciler/sandbox_controller.h"
#include "sim/scenario.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using fk::testing::MapCache;

TEST(Bounded, AnInterruptRunsItsHooksOnceAndAtOnceWhenAlreadyFired) {
  Interrupt stop;
  int ran = 0, dropped = 0;
  auto hook = stop.OnFire([&] { ++ran; });
  {
    auto gone = stop.OnFire([&] { ++dropped; });
  }  // unregistered before the fire
  stop.Fire();
  stop.Fire();
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(dropped, 0);
  auto late = stop.OnFire([&] { ++ran; });  // already fired: runs here and now
  EXPECT_EQ(ran, 2);
}

// ---- start-up resolution never blocks the others --------------------------

constexpr const char* kThreeStale = fk::testing::kThreeStaleSandboxes;
constexpr const char* kSandboxes = fk::testing::kNsSandboxesPath;

class StartupResolution : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::SimOptions so;
    so.emulate_agent_sandbox = false;
    sim_ = std::make_unique<sim::Simulator>(so, time_);
    auto sc = sim::ParseScenario(kThreeStale, "test");
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    ASSERT_TRUE(sim::ApplyScenario(*sim_, *sc).ok());
    journal::OpenOptions jo;
    jo.clock = &time_;
    auto j = journal::Journal::Open(dir_.File("journal.db"), jo);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
    cache_.FillFrom("ns",
                    [this](const std::string& path) { return fk::testing::SimGet(*sim_, path); });
  }

  // A process: a client over a FakeTransport into the simulator, where every
  // request about sandbox "a" hangs — the clock moves by the whole timeout
  // the client allowed, and no answer comes.
  void Start() {
    controller_.reset();
    auto transport = fk::testing::InProcessTransport(
        *sim_, [this](const kube::HttpRequest& r, const fk::testing::Forward& forward) {
          if (throttle_b_ && r.target.find("/sandboxes/b") != std::string::npos) {
            return Result<kube::HttpResponse>(kube::HttpResponse{
                429, R"({"kind":"Status","apiVersion":"v1","status":"Failure","code":429})",
                "application/json", 3600});
          }
          if (r.target.find("/sandboxes/a") != std::string::npos) {
            ++hung_a_;
            time_.Advance(transport_->requests().back().timeout);
            return Result<kube::HttpResponse>(Status::IOError("no answer (hung)"));
          }
          return forward();
        });
    transport_ = transport.get();
    kube::ClientOptions co;
    co.time = &time_;
    co.qps = 0;
    co.jitter_seed = 1;
    client_ = kube::ApiClient::CreateWithTransport({}, co, std::move(transport));
    SandboxControllerOptions o;
    o.time = &time_;
    controller_ = SandboxController::OverCache(cache_, *client_, *journal_, o, nullptr, nullptr);
  }

  // The worker's loop on manual time: one key whenever one is due, else the
  // clock jumps to the next delayed key. Stops when `done` holds or `limit`
  // of manual time has passed.
  void RunUntil(const std::function<bool()>& done, std::chrono::milliseconds limit) {
    const MonoTime end = time_.MonotonicNow() + limit;
    while (!done() && time_.MonotonicNow() < end) {
      if (controller_->ProcessNextWorkItem(false)) continue;
      const auto due = controller_->queue().NextDue();
      if (!due) break;
      time_.Advance(
          std::max(1ms, std::chrono::ceil<std::chrono::milliseconds>(*due - time_.MonotonicNow())));
    }
  }

  std::string Mode(const std::string& name) {
    const json::value o = fk::testing::SimGet(*sim_, std::string(kSandboxes) + "/" + name);
    return kube::StringField(kube::ObjectField(o, "spec"), "operatingMode").value_or("");
  }
  bool OthersSuspended() { return Mode("b") == "Suspended" && Mode("c") == "Suspended"; }

  ManualTimeSource time_;
  fk::testing::TempDir dir_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<journal::Journal> journal_;
  MapCache cache_;
  kube::FakeTransport* transport_ = nullptr;
  std::unique_ptr<kube::ApiClient> client_;
  std::unique_ptr<SandboxController> controller_;
  int hung_a_ = 0;
  bool throttle_b_ = false;
};

// Issue 9: "start-up resolution retries one sandbox's failing GET forever and
// blocks everything". A crash left an intent for "a" pending; after the
// restart every read of "a" hangs. Its key is tried first (pending intents
// are queued before anything else) and keeps failing, with backoff — while
// b and c, stale too, are suspended within one request timeout of the start,
// not after a's reads have used up all their retries.
TEST_F(StartupResolution, OneSandboxWhoseResolutionHangsDoesNotHoldUpTheOthers) {
  Start();
  controller_->OnChange(CacheKind::kSandboxes, "ns", "a");
  ASSERT_TRUE(controller_->ProcessNextWorkItem(false));  // intent recorded, PATCH lost
  ASSERT_EQ(journal_->state().pending_intents.size(), 1u);

  Start();  // the restart: a new client and controller on the same journal
  const MonoTime started = time_.MonotonicNow();
  controller_->EnqueuePendingIntents();
  controller_->EnqueueAll();
  RunUntil([&] { return OthersSuspended(); }, 10min);
  const auto took = time_.MonotonicNow() - started;
  EXPECT_TRUE(OthersSuspended());
  EXPECT_LE(took, 30s) << "b and c waited "
                       << std::chrono::duration_cast<std::chrono::seconds>(took).count()
                       << " s for a's resolution";
  // And a keeps being retried, with backoff, its intent still pending.
  const int tries = hung_a_;
  RunUntil([] { return false; }, 10min);
  EXPECT_GT(hung_a_, tries);
  EXPECT_LT(hung_a_, tries + 40);  // backed off, not hammered
  EXPECT_EQ(journal_->state().pending_intents.size(), 1u);
  EXPECT_EQ(Mode("a"), "Running");
}

// A server that answers a suspend PATCH and the read-back with 429 and
// Retry-After: 3600: the key is requeued after a minute — not an hour, and
// not after the 50 ms backoff either.
TEST_F(StartupResolution, AThrottledKeyIsRequeuedAfterTheRetryAfterCappedAtAMinute) {
  throttle_b_ = true;
  Start();
  controller_->OnChange(CacheKind::kSandboxes, "ns", "b");
  ASSERT_TRUE(controller_->ProcessNextWorkItem(false));
  ASSERT_TRUE(controller_->queue().NextDue().has_value());
  EXPECT_EQ(*controller_->queue().NextDue() - time_.MonotonicNow(), 60s);
  EXPECT_EQ(journal_->state().pending_intents.size(), 1u);  // unknown, so pending
}

}  // namespace
}  // namespace fk::reconciler
