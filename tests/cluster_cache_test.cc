// What the reconciler reads about the cluster (reconciler/cluster_cache.h):
// the production InformerCache over a real API, and the pod -> sandbox index
// a pod event is answered from.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "client_fixture.h"
#include "fake_transport.h"
#include "journal/journal.h"
#include "kube/objects.h"
#include "map_cache.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/sandbox_controller.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/store.h"
#include "test_support.h"

namespace fk::kube {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

using fk::testing::ClientTest;
using fk::testing::Eventually;

// The production cache over a real API: compact structs only (no JSON tree is
// kept), every policy of the namespace (the effective fence reads them all),
// and a pod -> sandbox index that follows the sandboxes' changes.
TEST_F(ClientTest, TheInformerCacheKeepsCompactStructsOfThePoliciesSandboxesAndPods) {
  sim::SimOptions quiet;
  quiet.emulate_agent_sandbox = false;
  StartServer({}, quiet);
  Client();
  auto sc = sim::ParseScenario("namespaces: [{name: ns, sandboxes: [{name: a}, {name: b}]}]", "t");
  ASSERT_TRUE(sc.ok());
  ASSERT_TRUE(sim::ApplyScenario(*sim_, *sc).ok());
  const auto* policies = sim::FindKind("networking.k8s.io", "networkpolicies");
  ASSERT_TRUE(sim_->store()
                  .Create(*policies, "ns", json::parse(R"({"metadata":{"name":"allow-dns"}})"))
                  .ok());
  reconciler::CacheScope scope;
  scope.namespaces = {"ns"};
  scope.informer.initial_backoff = 5ms;
  reconciler::InformerCache cache(*client_, scope);
  cache.Start();
  ASSERT_TRUE(Eventually([&] { return cache.Synced(); }));
  EXPECT_EQ(cache.informers()[1]->store().size(), 3u);  // the fences and allow-dns
  ASSERT_NE(cache.Policy("ns", "allow-dns"), nullptr);
  EXPECT_FALSE(cache.Policy("ns", "allow-dns")->intact);
  EXPECT_EQ(cache.Policies("ns").size(), 3u);
  ASSERT_NE(cache.Policy("ns", domain::kWorkloadPolicyName), nullptr);
  EXPECT_TRUE(cache.Policy("ns", domain::kWorkloadPolicyName)->Observation().intact);
  for (const auto& informer : cache.informers()) {
    for (const auto& cached : informer->store().List()) EXPECT_EQ(JsonOf(cached), nullptr);
  }
  const auto* sandboxes = sim::FindKind("agents.x-k8s.io", "sandboxes");
  const std::string uid_a = MetadataString(sim_->store().Get(*sandboxes, "ns", "a").object, "uid");
  ASSERT_NE(cache.Sandbox("ns", "a"), nullptr);
  EXPECT_EQ(cache.Sandbox("ns", "a")->Parsed("ns", "a").observation.uid, uid_a);
  ASSERT_NE(cache.Pod("ns", "os-supervisor-a"), nullptr);
  EXPECT_TRUE(cache.Pod("ns", "os-supervisor-a")->Observation().present);
  EXPECT_EQ(cache.SandboxesNamingPod("ns", "a"), std::vector<std::string>{"a"});
  EXPECT_EQ(cache.SandboxesNamingPod("ns", "os-supervisor-b"), std::vector<std::string>{"b"});

  // Watched changes: a new policy that is not a fence is cached too; a sandbox
  // that now names another workload pod, and one deleted, leave the index.
  ASSERT_TRUE(sim_->store()
                  .Create(*policies, "ns", json::parse(R"({"metadata":{"name":"allow-web"}})"))
                  .ok());
  sim_->store().Mutate(
      *sandboxes, "ns", "a",
      [](json::value& v) -> std::optional<sim::ApiFailure> {
        v.at("metadata").at("annotations").as_object()[kPodNameAnnotation] = "a-2";
        return std::nullopt;
      },
      false);
  sim_->store().Delete(*sandboxes, "ns", "b", std::nullopt, std::nullopt);
  ASSERT_TRUE(Eventually([&] {
    return cache.Sandbox("ns", "b") == nullptr && cache.SandboxesNamingPod("ns", "a-2").size() == 1;
  }));
  EXPECT_TRUE(cache.SandboxesNamingPod("ns", "a").empty());
  EXPECT_TRUE(cache.SandboxesNamingPod("ns", "os-supervisor-b").empty());
  EXPECT_EQ(cache.SandboxesNamingPod("ns", "os-supervisor-a"), std::vector<std::string>{"a"});
  ASSERT_TRUE(Eventually([&] { return cache.Policy("ns", "allow-web") != nullptr; }));
  EXPECT_EQ(cache.informers()[1]->store().size(), 4u);
  cache.Stop();
}

// A pod event reads only the sandboxes that name the pod (the index), not
// every sandbox of the namespace: a rollout's pod events were quadratic.
TEST(PodIndex, APodEventReadsOnlyTheSandboxesThatNameIt) {
  testing::TempDir dir;
  auto journal = journal::Journal::Open(dir.File("journal.db"));
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  auto client = ApiClient::CreateWithTransport(
      {}, {}, std::make_unique<FakeTransport>([](const HttpRequest&) {
        return Result<HttpResponse>(Status::IOError("no API in this test"));
      }));
  fk::testing::MapCache cache;
  auto sandbox = [](int i, const std::string& extra = "") {
    const std::string n = std::to_string(i);
    return std::make_shared<const json::value>(
        json::parse(R"({"metadata":{"name":"sb-)" + n + R"(","namespace":"ns","uid":"u-)" + n +
                    R"(","labels":{"openshell.ai/sandbox-id":"Id-)" + n + R"("},"annotations":{)" +
                    extra + "}}}"));
  };
  constexpr int kSandboxes = 1000;
  for (int i = 0; i < kSandboxes; ++i) {
    cache.Put(reconciler::CacheKind::kSandboxes, "ns", "sb-" + std::to_string(i), sandbox(i));
  }
  ManualTimeSource time;
  reconciler::SandboxControllerOptions o;
  o.time = &time;
  auto controller =
      reconciler::SandboxController::OverCache(cache, *client, **journal, o, nullptr, nullptr);
  auto on_pod = [&](const std::string& pod) {
    const size_t reads = cache.sandbox_reads();
    controller->OnChange(reconciler::CacheKind::kPods, "ns", pod);
    std::vector<std::string> keys;
    while (auto key = controller->queue().TryGet()) {
      controller->queue().Done(*key);
      keys.push_back(key->ToString());
    }
    return std::pair(cache.sandbox_reads() - reads, keys);
  };
  using Touched = std::pair<size_t, std::vector<std::string>>;
  EXPECT_EQ(on_pod("os-supervisor-id-7"), (Touched{1, {"ns/sb-7"}}));
  EXPECT_EQ(on_pod("sb-8"), (Touched{1, {"ns/sb-8"}}));
  EXPECT_EQ(on_pod("nobody's"), (Touched{0, {}}));
  // The workload pod named by annotation: the index follows the change.
  cache.Put(reconciler::CacheKind::kSandboxes, "ns", "sb-9",
            sandbox(9, R"("agents.x-k8s.io/pod-name":"custom")"));
  EXPECT_EQ(on_pod("custom"), (Touched{1, {"ns/sb-9"}}));
  EXPECT_EQ(on_pod("sb-9"), (Touched{0, {}}));
  cache.Put(reconciler::CacheKind::kSandboxes, "ns", "sb-9", nullptr);
  EXPECT_EQ(on_pod("custom"), (Touched{0, {}}));
  EXPECT_EQ(on_pod("os-supervisor-id-9"), (Touched{0, {}}));
  EXPECT_EQ(cache.pod_index_size(), 2u * (kSandboxes - 1));
}

// ---- the pod index itself ---------------------------------------------------------

// A cached sandbox naming `workload` ("" = its own name) and `supervisor`.
kube::CachedRef<const CachedSandbox> Naming(const std::string& workload,
                                            const std::string& supervisor = "") {
  kube::ParsedSandbox parsed;
  parsed.workload_pod_name = workload;
  parsed.supervisor_pod_name = supervisor;
  return CachedSandbox::Of(parsed);
}

TEST(PodIndex, FollowsEachSandboxsPodsThroughChangesAndDeletion) {
  reconciler::PodIndex index;
  auto a = Naming("", "os-supervisor-a");
  index.Update("ns", "a", nullptr, a.get());
  EXPECT_EQ(index.Candidates("ns", "a"), std::vector<std::string>{"a"});  // by its own name
  EXPECT_EQ(index.Candidates("ns", "os-supervisor-a"), std::vector<std::string>{"a"});
  EXPECT_TRUE(index.Candidates("other", "a").empty());  // per namespace
  EXPECT_EQ(index.size(), 2u);
  // Another sandbox naming the same pod: both are candidates; either leaving
  // takes only its own entry.
  auto b = Naming("a");
  index.Update("ns", "b", nullptr, b.get());
  auto both = index.Candidates("ns", "a");
  std::sort(both.begin(), both.end());
  EXPECT_EQ(both, (std::vector<std::string>{"a", "b"}));
  index.Update("ns", "b", b.get(), nullptr);
  EXPECT_EQ(index.Candidates("ns", "a"), std::vector<std::string>{"a"});
  // The workload pod renamed by annotation: the old name leaves the index.
  auto renamed = Naming("custom", "os-supervisor-a");
  index.Update("ns", "a", a.get(), renamed.get());
  EXPECT_TRUE(index.Candidates("ns", "a").empty());
  EXPECT_EQ(index.Candidates("ns", "custom"), std::vector<std::string>{"a"});
  EXPECT_EQ(index.size(), 2u);
  index.Update("ns", "a", renamed.get(), nullptr);
  EXPECT_EQ(index.size(), 0u);
  EXPECT_TRUE(index.Candidates("ns", "custom").empty());
}

TEST(PodIndex, ASandboxThatDoesNotParseNamesNoPod) {
  reconciler::PodIndex index;
  auto broken = kube::MakeCached<CachedSandbox>();
  broken->error = HeapText("spec.operatingMode is missing");
  index.Update("ns", "a", nullptr, broken.get());
  EXPECT_EQ(index.size(), 0u);
  EXPECT_TRUE(index.Candidates("ns", "a").empty());
  // Parsing again later: indexed from then on; broken again: gone.
  auto fixed = Naming("");
  index.Update("ns", "a", broken.get(), fixed.get());
  EXPECT_EQ(index.Candidates("ns", "a"), std::vector<std::string>{"a"});
  index.Update("ns", "a", fixed.get(), broken.get());
  EXPECT_EQ(index.size(), 0u);
}

// SandboxesNamingPod checks each candidate against the cached sandbox (an
// index entry is only a hint) and names each sandbox once.
TEST(PodIndex, SandboxesNamingPodKeepsOnlyCandidatesTheCachedSandboxConfirms) {
  class Sandboxes final : public reconciler::ClusterCache {
   public:
    reconciler::SandboxPtr Sandbox(const std::string& ns, const std::string& name) const override {
      auto it = sandboxes.find({ns, name});
      return it == sandboxes.end() ? nullptr : it->second;
    }
    std::vector<reconciler::ObjectKey> SandboxKeys(const std::string&) const override { return {}; }
    reconciler::PolicyPtr Policy(const std::string&, const std::string&) const override {
      return nullptr;
    }
    std::vector<std::pair<std::string, reconciler::PolicyPtr>> Policies(
        const std::string&) const override {
      return {};
    }
    reconciler::PodPtr Pod(const std::string&, const std::string&) const override {
      return nullptr;
    }
    std::map<std::string, size_t> CountByNamespace(reconciler::CacheKind) const override {
      return {};
    }
    bool Synced() const override { return true; }

    std::map<reconciler::ObjectKey, reconciler::SandboxPtr> sandboxes;
    reconciler::PodIndex index;

   private:
    const reconciler::PodIndex& pod_index() const override { return index; }
  } cache;
  // "a" names pod "os-supervisor-p" twice over (workload and supervisor): named once.
  auto a = Naming("os-supervisor-p", "os-supervisor-p");
  ASSERT_EQ(a->Pods("a"), (std::vector<std::string>{"os-supervisor-p", "os-supervisor-p"}));
  cache.sandboxes[{"ns", "a"}] = a;
  cache.index.Update("ns", "a", nullptr, a.get());
  EXPECT_EQ(cache.SandboxesNamingPod("ns", "os-supervisor-p"), std::vector<std::string>{"a"});
  // The index still says "b" names "p", but the cached "b" names another pod
  // now, and "c" is not cached at all: neither is named.
  cache.index.Update("ns", "b", nullptr, Naming("os-supervisor-p").get());
  cache.sandboxes[{"ns", "b"}] = Naming("q");
  cache.index.Update("ns", "c", nullptr, Naming("os-supervisor-p").get());
  EXPECT_EQ(cache.SandboxesNamingPod("ns", "os-supervisor-p"), std::vector<std::string>{"a"});
  EXPECT_TRUE(cache.SandboxesNamingPod("ns", "nobody").empty());
}

}  // namespace
}  // namespace fk::kube
