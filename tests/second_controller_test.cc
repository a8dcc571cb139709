// How a second controller is added (docs/architecture.md#adding-a-controller):
// a toy controller over NetworkPolicies — the generic loop with a reconciler,
// mappers and resync keys of its own — runs beside the sandbox controller
// over one cache filled from the simulator. Each hears the changes every
// subscriber hears and works only the keys its mappers make of them; neither
// knows of the other. Driven one work item at a time on the test's thread.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fake_transport.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "map_cache.h"
#include "reconciler/controller.h"
#include "reconciler/sandbox_controller.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {

// The toy's reconciler: what it is asked about, and the generation the cache
// shows for it. It owns NetworkPolicies as SandboxReconciler owns sandboxes.
class PolicyAuditor final : public Reconciler {
 public:
  explicit PolicyAuditor(const ClusterCache& cache) : cache_(cache) {}
  ReconcileResult Reconcile(const ObjectKey& key) override {
    const PolicyPtr policy = cache_.Policy(key.ns.str(), key.name.str());
    seen.push_back(key.ToString() +
                   (policy ? " generation " + std::to_string(policy->generation) : " gone"));
    return ReconcileResult::Done();
  }
  std::vector<std::string> seen;

 private:
  const ClusterCache& cache_;
};

constexpr const char* kScenario = R"(
namespaces:
  - name: ns
    fence: {generation: 2}
    sandboxes:
      - {name: a, mode: Running, admittedFenceGeneration: 2}
      - {name: b, mode: Running, admittedFenceGeneration: 2}
      - {name: c, mode: Running, admittedFenceGeneration: 1}
)";
constexpr const char* kFence = "openshell-sandbox-workloads";

class SecondControllerTest : public ::testing::Test {
 protected:
  SecondControllerTest() {
    auto sim = fk::testing::SimulatorFrom(kScenario, time_);
    EXPECT_TRUE(sim.ok()) << sim.status().ToString();
    sim_ = std::move(*sim);
    auto journal = journal::Journal::Open(dir_.File("journal.db"));
    EXPECT_TRUE(journal.ok()) << journal.status().ToString();
    journal_ = std::move(*journal);
    kube::ClientOptions co;
    co.time = &time_;
    co.max_retries = 0;
    client_ = kube::ApiClient::CreateWithTransport({}, co, fk::testing::InProcessTransport(*sim_));
    Refill();
    SandboxControllerOptions o;
    o.time = &time_;
    o.create_events = false;
    sandboxes_ = SandboxController::OverCache(cache_, *client_, *journal_, o, nullptr, nullptr);
    // The toy: one mapper (a policy's change is about that policy), its own
    // resync keys, no metrics.
    Controller::Options options;
    options.time = &time_;
    options.resync_keys = [this] {
      std::vector<ObjectKey> keys;
      for (const auto& [name, policy] : cache_.Policies("ns")) keys.emplace_back("ns", name);
      return keys;
    };
    std::map<CacheKind, KeyMapper> mappers;
    mappers[CacheKind::kPolicies] = [](const std::string& ns, const std::string& name) {
      return std::vector<ObjectKey>{{ns, name}};
    };
    policies_ = std::make_unique<Controller>(cache_, auditor_, mappers, options, nullptr);
  }

  // The cache as the simulator's objects are now.
  void Refill() {
    for (auto kind : {CacheKind::kSandboxes, CacheKind::kPods, CacheKind::kPolicies})
      cache_.Clear(kind);
    cache_.FillFrom("ns",
                    [this](const std::string& path) { return fk::testing::SimGet(*sim_, path); });
  }
  // A change, to every subscriber (as InformerCache::Subscribe delivers it).
  void Changed(CacheKind kind, const std::string& name) {
    sandboxes_->OnChange(kind, "ns", name);
    policies_->OnChange(kind, "ns", name);
  }
  // Works every due key of both loops; how many of each.
  std::pair<int, int> Drain() {
    int s = 0, p = 0;
    while (sandboxes_->ProcessNextWorkItem(/*block=*/false)) ++s;
    while (policies_->ProcessNextWorkItem(/*block=*/false)) ++p;
    return {s, p};
  }
  // Sandboxes the journal records a suspend applied to.
  size_t Suspended() {
    return journal_->Read([](const domain::JournalState& s) {
      size_t n = 0;
      for (const auto& [uid, r] : s.sandboxes) n += r.history.applied_generation.has_value();
      return n;
    });
  }

  ManualTimeSource time_;
  fk::testing::TempDir dir_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<kube::ApiClient> client_;
  fk::testing::MapCache cache_;
  PolicyAuditor auditor_{cache_};
  std::unique_ptr<SandboxController> sandboxes_;
  std::unique_ptr<Controller> policies_;
};

TEST_F(SecondControllerTest, AToyControllerOverPoliciesRunsBesideTheSandboxController) {
  const size_t policies = cache_.Policies("ns").size();
  ASSERT_GE(policies, 2u);  // the two fence policies at least
  sandboxes_->EnqueueAll();
  policies_->EnqueueAll();
  const auto [first_sandboxes, first_policies] = Drain();
  EXPECT_EQ(first_sandboxes, 3);  // a, b, c: the sandbox controller's keys only
  EXPECT_EQ(first_policies, static_cast<int>(policies));
  EXPECT_EQ(Suspended(), 1u);  // c, admitted under generation 1
  ASSERT_EQ(auditor_.seen.size(), policies);
  EXPECT_NE(std::find(auditor_.seen.begin(), auditor_.seen.end(),
                      std::string("ns/") + kFence + " generation 2"),
            auditor_.seen.end());

  // The fence rolls: one change of one policy, heard by both. The toy works
  // that policy alone; the sandbox controller every sandbox of its namespace.
  auditor_.seen.clear();
  const int64_t generation = sim::RollFence(*sim_, "ns");
  ASSERT_EQ(generation, 3);
  Refill();
  Changed(CacheKind::kPolicies, kFence);
  const auto [second_sandboxes, second_policies] = Drain();
  EXPECT_EQ(second_sandboxes, 3);
  EXPECT_EQ(second_policies, 1);
  EXPECT_EQ(auditor_.seen,
            (std::vector<std::string>{std::string("ns/") + kFence + " generation 3"}));
  EXPECT_EQ(Suspended(), 3u);  // a and b now too
}

}  // namespace
}  // namespace fk::reconciler
