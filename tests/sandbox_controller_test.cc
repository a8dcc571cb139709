// The sandbox controller over a hand-fed cache, driven one work item at a time
// on the test's thread (issue 17): the verdict gauge follows the sandboxes
// that exist, and a resync never cuts a failing key's backoff short.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "fake_transport.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "map_cache.h"
#include "metric_sample.h"
#include "reconciler/journal_metrics.h"
#include "reconciler/sandbox_controller.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/store.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
using namespace std::chrono_literals;

class ControllerTest : public ::testing::Test {
 protected:
  // A controller over `scenario`, not started: the test drives it with Drain().
  void Start(const std::string& scenario, const std::vector<sim::FaultRule>& faults = {},
             SandboxControllerOptions o = {}) {
    sim::SimOptions so;
    so.emulate_agent_sandbox = false;
    sim_ = std::make_unique<sim::Simulator>(so, time_);
    for (const sim::FaultRule& f : faults) sim_->AddFault(f);
    auto sc = sim::ParseScenario(scenario, "test");
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    ASSERT_TRUE(sim::ApplyScenario(*sim_, *sc).ok());
    auto j = journal::Journal::Open(dir_.File("journal.db"));
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
    client_ = MakeClient();
    cache_.FillFrom("ns",
                    [this](const std::string& path) { return fk::testing::SimGet(*sim_, path); });
    o.time = &time_;
    o.create_events = false;
    controller_ = SandboxController::OverCache(cache_, *client_, *journal_, o, &metrics_, nullptr);
  }

  // A controller stops its client: each gets one of its own.
  std::unique_ptr<kube::ApiClient> MakeClient() {
    auto transport = fk::testing::InProcessTransport(
        *sim_, [this](const kube::HttpRequest& r, const fk::testing::Forward& forward) {
          if (during_request_) during_request_(r);
          return forward();
        });
    transport_ = transport.get();
    kube::ClientOptions co;
    co.time = &time_;
    co.max_retries = 0;
    return kube::ApiClient::CreateWithTransport({}, co, std::move(transport));
  }

  // Works every key that is due now; how many.
  int Drain() {
    int n = 0;
    while (controller_->ProcessNextWorkItem(/*block=*/false)) ++n;
    return n;
  }

  int Total(const std::map<std::string, int>& counts) {
    int n = 0;
    for (const auto& [verdict, count] : counts) n += count;
    return n;
  }

  // The sum of fencekeeper_sandboxes over its verdicts, as scraped.
  double ScrapedSandboxes() {
    ReportVerdicts(*journal_, metrics_);  // as the manager does at a scrape
    const std::string m = metrics_.Render();
    double sum = 0;
    for (size_t at = 0; (at = m.find("\nfencekeeper_sandboxes{", at)) != std::string::npos;) {
      at = m.find("} ", at) + 2;
      sum += std::stod(m.substr(at));
    }
    return sum;
  }

  ManualTimeSource time_;
  Metrics metrics_;
  fk::testing::TempDir dir_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<journal::Journal> journal_;
  kube::FakeTransport* transport_ = nullptr;
  std::function<void(const kube::HttpRequest&)> during_request_;  // on the worker's thread
  std::unique_ptr<kube::ApiClient> client_;
  fk::testing::MapCache cache_;
  std::unique_ptr<SandboxController> controller_;
};

constexpr const char* kTwoHealthyOneStale = R"(
namespaces:
  - name: ns
    fence: {generation: 2}
    sandboxes:
      - {name: a, mode: Running, admittedFenceGeneration: 2}
      - {name: b, mode: Running, admittedFenceGeneration: 2}
      - {name: c, mode: Running, admittedFenceGeneration: 1}
)";

// A deleted sandbox leaves fencekeeper_sandboxes{verdict}: the gauge counts
// the sandboxes that exist, not every one ever seen.
TEST_F(ControllerTest, TheVerdictGaugeForgetsADeletedSandbox) {
  Start(kTwoHealthyOneStale);
  controller_->EnqueueAll();
  Drain();
  ASSERT_EQ(Total(VerdictCounts(*journal_)), 3);
  EXPECT_EQ(ScrapedSandboxes(), 3);

  for (const char* name : {"a", "c"}) {
    ASSERT_TRUE(sim_->store()
                    .Delete(*sim::FindKind("agents.x-k8s.io", "sandboxes"), "ns", name,
                            std::nullopt, std::nullopt)
                    .ok());
    cache_.Put(CacheKind::kSandboxes, "ns", name, nullptr);
    controller_->OnChange(CacheKind::kSandboxes, "ns", name);
  }
  Drain();
  const auto counts = VerdictCounts(*journal_);
  EXPECT_EQ(Total(counts), 1);
  EXPECT_EQ(counts.at("healthy"), 1);
  EXPECT_EQ(ScrapedSandboxes(), 1);
  EXPECT_EQ(journal_->Read([](const domain::JournalState& s) { return s.sandboxes.size(); }), 1u);
}

// The queue drained after the journal recorded something hands the freed heap
// back once (the option `run` sets); drained after nothing new, not again.
TEST_F(ControllerTest, AQueueDrainedAfterRecordingReturnsFreedMemoryOnce) {
  int returned = 0;
  SandboxControllerOptions o;
  o.return_freed_memory = [&] { ++returned; };
  Start(kTwoHealthyOneStale, {}, o);
  const auto last_seq = [&] {
    return journal_->Read([](const domain::JournalState& s) { return s.last_seq; });
  };
  const auto catch_up = [this] {
    for (auto kind : {CacheKind::kSandboxes, CacheKind::kPods, CacheKind::kPolicies})
      cache_.Clear(kind);
    cache_.FillFrom("ns",
                    [this](const std::string& path) { return fk::testing::SimGet(*sim_, path); });
  };
  controller_->EnqueueAll();
  ASSERT_EQ(Drain(), 3);  // "c" suspended
  EXPECT_EQ(returned, 1);
  // The cache catches up (it shows "c" suspended): the PATCH's answer was
  // recorded with its outcome, so there is nothing new.
  catch_up();
  int64_t seq = last_seq();
  controller_->EnqueueAll();
  ASSERT_EQ(Drain(), 3);
  ASSERT_EQ(last_seq(), seq);
  EXPECT_EQ(returned, 1);
  // "c" resumed by hand at a newer generation: suspended again, recorded.
  sim::HandleRequest(*sim_,
                     {"PATCH", std::string(fk::testing::kNsSandboxesPath) + "/c",
                      R"({"spec":{"operatingMode":"Running"}})", "application/merge-patch+json"},
                     "test");
  catch_up();
  controller_->EnqueueAll();
  ASSERT_EQ(Drain(), 3);
  ASSERT_GT(last_seq(), seq);
  EXPECT_EQ(returned, 2);
}

// The count at start is the journal's, and a sandbox deleted while
// fencekeeper was down leaves it at its first pass.
TEST_F(ControllerTest, TheVerdictGaugeAtStartForgetsASandboxDeletedWhileDown) {
  Start(kTwoHealthyOneStale);
  controller_->EnqueueAll();
  Drain();
  controller_.reset();
  ASSERT_TRUE(sim_->store()
                  .Delete(*sim::FindKind("agents.x-k8s.io", "sandboxes"), "ns", "b", std::nullopt,
                          std::nullopt)
                  .ok());
  cache_.Put(CacheKind::kSandboxes, "ns", "b", nullptr);
  SandboxControllerOptions o;
  o.time = &time_;
  client_ = MakeClient();
  controller_ = SandboxController::OverCache(cache_, *client_, *journal_, o, &metrics_, nullptr);
  controller_->Start();  // counts what the journal holds, queues every key it remembers
  EXPECT_TRUE(fk::testing::Eventually([&] {
    return journal_->Read([](const domain::JournalState& s) { return s.sandboxes.size(); }) == 2u &&
           Total(VerdictCounts(*journal_)) == 2;
  })) << Total(VerdictCounts(*journal_));
  controller_->Stop();
  EXPECT_EQ(ScrapedSandboxes(), 2);
}

// The resync loop runs on its own thread: on a manual clock it waits for the
// test to move the clock and never moves it itself. It did (SleepFor moves a
// manual clock): it spun, 30 s a turn, and a worker's pass ran out of its
// 30 s budget before its PATCH was sent (WorkersTest failed so under load).
TEST_F(ControllerTest, TheResyncLoopWaitsForAManualClockAndNeverMovesIt) {
  SandboxControllerOptions o;
  o.resync = 30s;
  Start(kTwoHealthyOneStale, {}, o);
  controller_->Start();
  controller_->EnqueueAll();
  ASSERT_TRUE(fk::testing::Eventually([&] { return controller_->stats().applied == 1; }));
  const MonoTime before = time_.MonotonicNow();
  EXPECT_EQ(controller_->stats().resync_passes, 0);
  time_.Advance(30s);
  ASSERT_TRUE(fk::testing::Eventually([&] { return controller_->stats().resync_passes == 1; }));
  ASSERT_TRUE(fk::testing::Eventually([&] { return controller_->queue().Depth() == 0; }));
  controller_->Stop();
  EXPECT_EQ(controller_->stats().resync_passes, 1);  // the loop spinning: thousands
  EXPECT_EQ(time_.MonotonicNow() - before, 30s);     // only the test moved it
}

constexpr const char* kOneStale = R"(
namespaces:
  - name: ns
    fence: {generation: 2}
    sandboxes:
      - {name: c, mode: Running, admittedFenceGeneration: 1}
)";

// The API server refuses the next `count` PATCHes of sandboxes with 403.
sim::FaultRule RefusedPatches(int count) {
  sim::FaultRule refuse;
  refuse.verb = "patch";
  refuse.resource = "sandboxes";
  refuse.status = 403;
  refuse.count = count;
  return refuse;
}

// A PATCH the API server keeps refusing is re-sent per the key's backoff,
// not at every resync: a resync queues a key in backoff for when it is due.
TEST_F(ControllerTest, AResyncDoesNotCutAFailingKeysBackoffShort) {
  const sim::FaultRule refuse = RefusedPatches(1000);
  SandboxControllerOptions o;
  o.retry_base = 60s;
  o.retry_max = 600s;
  Start(kOneStale, {refuse}, o);
  const auto patches = [&] { return transport_->Count("PATCH"); };
  controller_->EnqueueAll();
  Drain();
  ASSERT_EQ(patches(), 1);
  ASSERT_TRUE(controller_->queue().NextDue().has_value());  // one failure: back after 60 s
  EXPECT_EQ(*controller_->queue().NextDue() - time_.MonotonicNow(), 60s);
  for (int resync = 0; resync < 3; ++resync) {
    time_.Advance(10s);
    controller_->EnqueueAll();  // a resync every 10 s, inside the 60 s backoff
    EXPECT_EQ(Drain(), 0);
  }
  EXPECT_EQ(patches(), 1);
  time_.Advance(30s);  // the backoff has passed: sent again, once
  controller_->EnqueueAll();
  EXPECT_EQ(Drain(), 1);
  EXPECT_EQ(patches(), 2);
  // A change of the sandbox itself is no resync: it is looked at at once.
  time_.Advance(1s);
  controller_->OnChange(CacheKind::kSandboxes, "ns", "c");
  EXPECT_EQ(Drain(), 1);
}

// controller-runtime's and client-go's families move with the controller's
// real work: each queued key is an add and counts in the depth until a worker
// takes it; a refused PATCH is an error and a retry, and its retry a success;
// a worker counts as active only while it reconciles.
TEST_F(ControllerTest, ControllerRuntimeFamiliesMoveWithTheWork) {
  const sim::FaultRule refuse = RefusedPatches(1);
  SandboxControllerOptions o;
  o.workers = 3;
  o.retry_base = 1s;
  Start(kTwoHealthyOneStale, {refuse}, o);
  using fk::testing::Sample;
  const auto queue = [&](const std::string& family) {
    return Sample(metrics_, "workqueue_" + family + "{name=\"sandbox\"}");
  };
  const auto runtime = [&](const std::string& family, const std::string& result = "") {
    return Sample(metrics_, "controller_runtime_" + family + "{controller=\"sandbox\"" +
                                (result.empty() ? "" : ",result=\"" + result + "\"") + "}");
  };
  EXPECT_EQ(runtime("max_concurrent_reconciles"), 3);
  controller_->EnqueueAll();
  EXPECT_EQ(queue("adds_total"), 3);
  EXPECT_EQ(queue("depth"), 3);
  double active_while_patching = -1;
  during_request_ = [&](const kube::HttpRequest& r) {
    if (r.method == "PATCH") active_while_patching = runtime("active_workers");
  };
  EXPECT_EQ(Drain(), 3);
  EXPECT_EQ(active_while_patching, 1);
  EXPECT_EQ(runtime("active_workers"), 0);
  EXPECT_EQ(queue("depth"), 0);
  EXPECT_EQ(runtime("reconcile_total", "success"), 2);
  EXPECT_EQ(runtime("reconcile_total", "error"), 1);
  EXPECT_EQ(runtime("reconcile_errors_total"), 1);
  EXPECT_EQ(queue("retries_total"), 1);
  EXPECT_EQ(queue("queue_duration_seconds_count"), 3);

  time_.Advance(1s);  // the refused key's backoff has passed
  EXPECT_EQ(Drain(), 1);
  EXPECT_EQ(queue("adds_total"), 4);
  EXPECT_EQ(runtime("reconcile_total", "success"), 3);
  EXPECT_EQ(runtime("reconcile_total", "error"), 1);
  EXPECT_EQ(runtime("reconcile_time_seconds_count"), 4);
  EXPECT_EQ(queue("work_duration_seconds_count"), 4);
  EXPECT_EQ(transport_->Count("PATCH"), 2);
}

}  // namespace
}  // namespace fk::reconciler
