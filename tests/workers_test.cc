// The controller's workers (issue 10): several sandboxes are reconciled at
// once, never one sandbox by two workers, and a rollout's PATCHes go out
// concurrently. Over the in-process simulator through a FakeTransport that
// holds each suspend PATCH until the test has seen enough of them in flight.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <condition_variable>
#include <mutex>
#include <set>

#include "fake_transport.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "kube/json.h"
#include "kube/json_fields.h"
#include "map_cache.h"
#include "reconciler/sandbox_controller.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
using namespace std::chrono_literals;

// `n` running sandboxes admitted under fence generation 1 while the fence is at 2.
std::string StaleScenario(int n) {
  std::string y = "namespaces:\n  - name: ns\n    fence: {generation: 2}\n    sandboxes:\n";
  for (int i = 0; i < n; ++i)
    y +=
        "      - {name: sb-" + std::to_string(i) + ", mode: Running, admittedFenceGeneration: 1}\n";
  return y;
}

// Counts suspend PATCHes in flight, overall and per sandbox, and holds each
// one until `target` are in flight at once (or a deadline passes, so a
// controller that never gets there fails instead of hanging).
class PatchGate {
 public:
  explicit PatchGate(int target) : target_(target) {}

  void Enter(const std::string& target) {
    std::unique_lock lock(mu_);
    ++in_flight_;
    if (!on_sandbox_.insert(target).second) overlapping_ = true;
    max_in_flight_ = std::max(max_in_flight_, in_flight_);
    ++sent_;
    cv_.notify_all();
    cv_.wait_for(lock, 10s, [this] { return released_ || in_flight_ >= target_; });
    if (in_flight_ >= target_) released_ = true;  // from now on nothing waits
    cv_.notify_all();
  }
  void Leave(const std::string& target) {
    std::lock_guard lock(mu_);
    --in_flight_;
    on_sandbox_.erase(target);
  }
  int max_in_flight() const {
    std::lock_guard lock(mu_);
    return max_in_flight_;
  }
  int sent() const {
    std::lock_guard lock(mu_);
    return sent_;
  }
  bool overlapping() const {
    std::lock_guard lock(mu_);
    return overlapping_;
  }

 private:
  const int target_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int in_flight_ = 0, max_in_flight_ = 0, sent_ = 0;
  bool released_ = false, overlapping_ = false;
  std::set<std::string> on_sandbox_;
};

class WorkersTest : public ::testing::Test {
 protected:
  void Start(int sandboxes, int workers, PatchGate* gate,
             const std::vector<sim::FaultRule>& faults = {}) {
    sim::SimOptions so;
    so.emulate_agent_sandbox = false;
    sim_ = std::make_unique<sim::Simulator>(so, time_);
    for (const sim::FaultRule& f : faults) sim_->AddFault(f);
    auto sc = sim::ParseScenario(StaleScenario(sandboxes), "test");
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    ASSERT_TRUE(sim::ApplyScenario(*sim_, *sc).ok());
    auto j = journal::Journal::Open(dir_.File("journal.db"));
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
    auto transport = fk::testing::InProcessTransport(
        *sim_, [gate](const kube::HttpRequest& r, const fk::testing::Forward& forward) {
          if (r.method == "PATCH") gate->Enter(r.target);
          Result<kube::HttpResponse> answer = forward();
          if (r.method == "PATCH") gate->Leave(r.target);
          return answer;
        });
    kube::ClientOptions co;
    co.time = &time_;
    co.on_request = [this](const std::string& verb, int code, double seconds) {
      metrics_.ApiRequest(verb, code, seconds, "sim");
    };
    client_ = kube::ApiClient::CreateWithTransport({}, co, std::move(transport));
    for (const char* collection :
         {fk::testing::kNsSandboxesPath, "/apis/networking.k8s.io/v1/namespaces/ns/networkpolicies",
          "/api/v1/namespaces/ns/pods"})
      Fill(collection);
    SandboxControllerOptions o;
    o.time = &time_;
    o.workers = workers;
    o.create_events = false;
    controller_ = SandboxController::OverCache(cache_, *client_, *journal_, o, &metrics_, nullptr);
    controller_->Start();
    controller_->EnqueueAll();
  }

  void Fill(const std::string& collection) {
    sim::ApiReply r = sim::HandleRequest(*sim_, {"GET", collection, "", ""}, "sim");
    auto list = kube::ParseJson(r.body, "list");
    ASSERT_TRUE(list.ok());
    const auto kind = collection.ends_with("sandboxes")  ? CacheKind::kSandboxes
                      : collection.ends_with("policies") ? CacheKind::kPolicies
                                                         : CacheKind::kPods;
    for (const auto& item : (*list)->at("items").as_array())
      cache_.Put(kind, "ns", kube::MetadataString(item, "name"),  // a copy out of the list's arena
                 std::make_shared<const boost::json::value>(item, boost::json::storage_ptr()));
  }

  size_t Applied() {
    return journal_->Read([](const domain::JournalState& s) {
      size_t n = 0;
      for (const auto& [uid, r] : s.sandboxes) n += r.history.applied_generation.has_value();
      return n;
    });
  }

  ManualTimeSource time_;
  Metrics metrics_;
  fk::testing::TempDir dir_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<kube::ApiClient> client_;
  fk::testing::MapCache cache_;
  std::unique_ptr<SandboxController> controller_;
};

TEST_F(WorkersTest, EightWorkersSuspendEightSandboxesAtOnceNeverOneSandboxTwice) {
  PatchGate gate(8);
  Start(32, 8, &gate);
  ASSERT_TRUE(fk::testing::Eventually([&] { return Applied() == 32; })) << Applied() << " applied";
  controller_->Stop();
  EXPECT_EQ(gate.max_in_flight(), 8);  // one worker: 1
  EXPECT_FALSE(gate.overlapping());
  EXPECT_EQ(gate.sent(), 32);  // one PATCH per stale sandbox, none repeated
  EXPECT_EQ(controller_->stats().applied, 32);
  EXPECT_EQ(controller_->stats().warnings, 32);
}

// The controller's metrics count what it did (issue 11): each reconcile by
// result, the retry of a refused suspend, each API answer by code.
TEST_F(WorkersTest, MetricsCountEachReconcileRetryAndApiAnswer) {
  PatchGate gate(1);
  sim::FaultRule refuse;
  refuse.verb = "patch";
  refuse.resource = "sandboxes";
  refuse.status = 403;  // the first suspend is refused, then retried after its backoff
  Start(2, 1, &gate, {refuse});
  ASSERT_TRUE(fk::testing::Eventually([&] {
    // The clock moves only to the refused key's retry (its backoff, a few ms):
    // moved freely, it ran out the passes' budget on a loaded machine (every
    // request "deadline passed before ... was sent", nothing applied).
    const auto due = controller_->queue().NextDue();
    if (due && *due > time_.MonotonicNow() && *due - time_.MonotonicNow() <= 1s)
      time_.Advance(std::chrono::ceil<std::chrono::milliseconds>(*due - time_.MonotonicNow()));
    return Applied() == 2;
  })) << Applied()
      << " applied";
  controller_->Stop();
  const std::string m = metrics_.Render();
  const auto value = [&m](const std::string& series) {
    const auto at = m.find("\n" + series + " ");
    return at == std::string::npos ? -1.0 : std::stod(m.substr(at + series.size() + 2));
  };
  // Exactly what the API server did: one refusal, then two suspends.
  EXPECT_EQ(value(R"(fencekeeper_transitions_total{outcome="failed",reason="fence-stale"})"), 1);
  EXPECT_EQ(value(R"(fencekeeper_transitions_total{outcome="applied",reason="fence-stale"})"), 2);
  EXPECT_EQ(value(R"(fencekeeper_api_requests_total{code="403",verb="PATCH"})"), 1);
  EXPECT_EQ(value(R"(fencekeeper_api_requests_total{code="200",verb="PATCH"})"), 2);
  EXPECT_EQ(value(R"(fencekeeper_api_request_duration_seconds_count{verb="PATCH"})"), 3);
  // The refusal made a reconcile end in an error, retried through the queue;
  // every reconcile is counted once by result, timed once, worked once.
  const double errors = value(R"(fencekeeper_reconcile_total{result="error"})");
  const double successes = value(R"(fencekeeper_reconcile_total{result="success"})");
  EXPECT_GE(errors, 1) << m;
  EXPECT_GE(successes, 2) << m;
  EXPECT_EQ(value("fencekeeper_reconcile_errors_total"), errors);
  EXPECT_EQ(value("fencekeeper_workqueue_retries_total"), errors);
  const double reconciles =
      errors + successes + value(R"(fencekeeper_reconcile_total{result="requeue"})");
  EXPECT_EQ(value("fencekeeper_reconcile_duration_seconds_count"), reconciles);
  EXPECT_EQ(value("fencekeeper_workqueue_work_duration_seconds_count"), reconciles);
  EXPECT_EQ(value("fencekeeper_workqueue_queue_duration_seconds_count"), reconciles);
}

}  // namespace
}  // namespace fk::reconciler
