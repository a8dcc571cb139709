// /readyz?verbose over HTTP against the real server and a running Manager:
// each check listed as Kubernetes components do, the plain form keeping its
// status code and short body (issue 9: readiness says which cache and why).
#include <gtest/gtest.h>

#include <thread>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <boost/json.hpp>

#include "cli/probes.h"
#include "http/server.h"
#include "http_probe.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "map_cache.h"
#include "reconciler/manager.h"
#include "reconciler/scope_log.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "sim/server.h"
#include "sim/simulator.h"
#include "sim_fixture.h"
#include "test_support.h"

namespace fk {
namespace {
using namespace std::chrono_literals;
using fk::testing::Eventually;

class Readyz : public testing::SimFixture {
 protected:
  void SetUp() override {
    // The log lines, captured to count them.
    previous_logger_ = spdlog::default_logger();
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", log_));
    StartSimFromYaml("namespaces: [{name: ns-a, sandboxes: [{name: a, mode: Running}]}]\n");
    if (HasFatalFailure()) return;
    journal::OpenOptions jo;
    jo.refuse_writes = [this] { return refuse_writes_.load(); };
    jo.reserve_bytes = 1 << 20;
    jo.volume_space = [this] {
      return Result<journal::VolumeSpace>(journal::VolumeSpace{free_bytes_.load(), 1'000'000'000});
    };
    auto j = journal::Journal::Open(dir_.File("journal.db"), jo);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
  }
  void TearDown() override {
    stop_.Fire();
    if (run_.joinable()) run_.join();
    if (http_) http_->Stop();
    spdlog::set_default_logger(previous_logger_);
  }
  int LogLines(const std::string& text) {
    int n = 0;
    for (const std::string& line : log_->last_formatted())
      n += line.find(text) != std::string::npos;
    return n;
  }

  // A manager watching ns-a, and its probes served on a free port.
  void Start(std::optional<reconciler::LeaderOptions> leader = std::nullopt) {
    reconciler::ManagerOptions mo;
    mo.cluster.server = server_->url();
    mo.client.max_retries = 0;  // the informer's own backoff retries, quickly
    mo.controller.namespaces = namespaces_;
    mo.controller.create_events = false;
    mo.controller.informer.initial_backoff = 5ms;
    mo.controller.informer.max_backoff = 20ms;
    mo.leader = std::move(leader);
    manager_ = std::make_unique<reconciler::Manager>(*journal_, metrics_, std::move(mo));
    http_ = std::make_unique<http::Server>("127.0.0.1", 0, [this](const http::Request& r) {
      return cli::Probe(r, *manager_, metrics_, /*serve_metrics=*/true);
    });
    ASSERT_TRUE(http_->Start().ok());
    // A 503 is the answer, not a reason to retry: one exchange a call.
    probe_ = fk::testing::HttpProbe::Create("http://127.0.0.1:" + std::to_string(http_->port()));
    ASSERT_TRUE(probe_);
  }
  void Run() {
    run_ = std::thread([this] { manager_->Run(stop_); });
  }
  kube::HttpResponse Get(const std::string& target) { return probe_->Get(target); }

  std::shared_ptr<spdlog::logger> previous_logger_;
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> log_ =
      std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1000);
  testing::TempDir dir_;
  std::unique_ptr<journal::Journal> journal_;
  std::vector<std::string> namespaces_ = {"ns-a"};
  reconciler::Metrics metrics_;
  std::unique_ptr<reconciler::Manager> manager_;
  std::unique_ptr<http::Server> http_;
  std::unique_ptr<fk::testing::HttpProbe> probe_;
  Interrupt stop_;
  std::thread run_;
  std::atomic<bool> refuse_writes_{false};
  std::atomic<int64_t> free_bytes_{100'000'000};  // the journal's volume, as CheckSpace sees it
};

TEST_F(Readyz, ListsEveryCheckAndNamesTheCacheThatIsNotSynced) {
  sim_->AddFault({"list", "pods", 500, 0, false, "", -1});  // the pod cache cannot list
  Start();
  kube::HttpResponse before = Get("/readyz?verbose");
  EXPECT_EQ(before.status, 503);
  EXPECT_EQ(before.body,
            "[+]journal ok\n[+]journal-volume ok\n[-]sandbox-api not discovered yet\n"
            "readyz check failed\n");
  Run();
  kube::HttpResponse r;
  ASSERT_TRUE(Eventually([&] {
    r = Get("/readyz?verbose");
    return r.body.find("[-]informer pods/ns-a not synced: ") != std::string::npos &&
           r.body.find("HTTP 500") != std::string::npos &&
           r.body.find("[+]informer sandboxes/ns-a ok") != std::string::npos &&
           r.body.find("[+]informer networkpolicies/ns-a ok") != std::string::npos;
  })) << r.body;
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(r.body.rfind("[+]journal ok\n", 0), 0u) << r.body;
  EXPECT_TRUE(r.body.ends_with("readyz check failed\n")) << r.body;
  kube::HttpResponse plain = Get("/readyz");
  EXPECT_EQ(plain.status, 503);
  EXPECT_EQ(plain.body, "not ready\n");

  sim_->ClearFaults();
  ASSERT_TRUE(Eventually([&] { return Get("/readyz").status == 200; }));
  EXPECT_EQ(Get("/readyz").body, "ready\n");
  EXPECT_EQ(Get("/readyz?verbose").body,
            "[+]journal ok\n"
            "[+]journal-volume ok: 100.0 MB free of 1000.0 MB\n"
            "[+]informer sandboxes/ns-a ok\n"
            "[+]informer networkpolicies/ns-a ok\n"
            "[+]informer pods/ns-a ok\n"
            "readyz check passed\n");
  // Issue 37: without --leader-elect there is no leader check to exclude; it
  // said "[+]leader excluded: ok". kube-apiserver warns of such a name.
  EXPECT_EQ(Get("/readyz?verbose&exclude=leader&exclude=journal").body,
            "[+]journal-volume ok: 100.0 MB free of 1000.0 MB\n"
            "[+]informer sandboxes/ns-a ok\n"
            "[+]informer networkpolicies/ns-a ok\n"
            "[+]informer pods/ns-a ok\n"
            "[+]journal excluded: ok\n"
            "warn: some health checks cannot be excluded: no matches for \"leader\"\n"
            "readyz check passed\n");
  // Silence is never the answer: the scope at start, what the caches hold once synced.
  EXPECT_EQ(LogLines("watching for Sandboxes scope=\"namespace ns-a\" api=agents.x-k8s.io/v1beta1 "
                     "selector=\"openshell.ai/managed-by=openshell,openshell.ai/sandbox-id\""),
            1);
  const std::string synced =
      "caches synced scope=\"namespace ns-a\" caches=\"1 sandboxes, 2 policies, 2 pods in 1 "
      "namespace(s) (ns-a: 1 sandboxes, 2 policies, 2 pods)\"";
  EXPECT_TRUE(Eventually([&] { return LogLines(synced) == 1; }));
  EXPECT_EQ(Get("/livez").status, 200);
  EXPECT_EQ(Get("/healthz").body, "ok\n");
}

// controller-runtime's AddReadyzCheck and Add(Runnable): a check added to
// the manager is listed after its own and can make it unready; a runnable
// runs from Run's start and is stopped when Run returns; a metrics source
// reports at every scrape.
TEST_F(Readyz, AddedChecksRunnablesAndMetricsSourcesTakePart) {
  Start();
  std::atomic<bool> cache_warm{false};
  manager_->AddReadinessCheck("warm-cache", [&]() -> reconciler::Manager::CheckResult {
    return {cache_warm.load(), cache_warm ? "" : "still warming"};
  });
  std::atomic<int> runs{0}, ended{0};
  manager_->AddRunnable("counter", [&](Interrupt& done) {
    ++runs;
    while (done.WaitFor(std::chrono::hours(1))) {
    }
    ++ended;
  });
  int scrapes = 0;
  manager_->AddMetricsSource([&] { ++scrapes; });
  Run();
  // Every informer synced: the added check is then the only one failing.
  ASSERT_TRUE(Eventually([&] {
    const std::string body = Get("/readyz?verbose").body;
    return body.find("[-]") == body.rfind("[-]") &&
           body.find("[-]warm-cache still warming\n") != std::string::npos;
  }));
  EXPECT_EQ(Get("/readyz").status, 503);
  kube::HttpResponse r = Get("/readyz?verbose");
  EXPECT_TRUE(
      r.body.ends_with("[+]informer pods/ns-a ok\n[-]warm-cache still warming\n"
                       "readyz check failed\n"))
      << r.body;
  cache_warm = true;
  EXPECT_EQ(Get("/readyz").status, 200);
  EXPECT_TRUE(Eventually([&] { return runs == 1; }));  // on the runnable's own thread
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(Get("/metrics").status, 200);
  EXPECT_EQ(scrapes, 1);
  stop_.Fire();
  run_.join();
  EXPECT_EQ(ended, 1);
}

TEST_F(Readyz, AVolumeShortOfSpaceIsSaidButStaysReadyAndIsCounted) {
  free_bytes_ = 1'500'000;  // less than twice the 1 MiB reserve
  Start();
  Run();
  const std::string line =
      "[+]journal-volume ok: 1.5 MB free of 1000.0 MB; short of space: shedding "
      "observations, keeping intents and outcomes (reserve held)\n";
  // Ready once the informers synced; the volume is said once the upkeep
  // thread's first reading is in, which may come later.
  std::string body;
  EXPECT_TRUE(Eventually([&] {
    const kube::HttpResponse r = Get("/readyz?verbose");
    body = r.body;
    return r.status == 200 && body.find(line) != std::string::npos;
  }));
  EXPECT_NE(body.find(line), std::string::npos) << body;
  const std::string metrics = Get("/metrics").body;
  EXPECT_NE(metrics.find("fencekeeper_journal_shedding 1"), std::string::npos);
  EXPECT_NE(metrics.find("fencekeeper_journal_volume_free_bytes 1500000"), std::string::npos);
  EXPECT_EQ(LogLines("journal volume short of space"), 1);
  free_bytes_ = 50'000'000;
  ASSERT_TRUE(Eventually([&] {
    return Get("/metrics").body.find("fencekeeper_journal_shedding 0") != std::string::npos;
  }));
  EXPECT_EQ(LogLines("journal volume has room again"), 1);
}

TEST_F(Readyz, AJournalThatRefusesWritesIsNamedUntilItTakesThemAgain) {
  refuse_writes_ = true;  // a full disk
  Start();
  Run();
  kube::HttpResponse r;
  ASSERT_TRUE(Eventually([&] {
    r = Get("/readyz?verbose");
    return r.body.rfind("[-]journal not writable: the last write failed\n", 0) == 0;
  })) << r.body;
  EXPECT_EQ(r.status, 503);
  EXPECT_NE(r.body.find("[+]informer sandboxes/ns-a ok\n"), std::string::npos) << r.body;
  refuse_writes_ = false;
  ASSERT_TRUE(Eventually([&] { return Get("/readyz").status == 200; }));
  EXPECT_EQ(Get("/readyz?verbose").body.rfind("[+]journal ok\n", 0), 0u);
}

TEST_F(Readyz, AnInstanceThatDoesNotLeadSaysSo) {
  // Another instance holds the Lease for an hour.
  sim::HandleRequest(*sim_,
                     {"POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases",
                      R"({"apiVersion":"coordination.k8s.io/v1","kind":"Lease",
                          "metadata":{"name":"fencekeeper","namespace":"default"},
                          "spec":{"holderIdentity":"other","leaseDurationSeconds":3600}})",
                      "application/json"},
                     "sim");
  reconciler::LeaderOptions lo;
  lo.identity = "me";
  lo.lease_duration = 1s;
  lo.renew_deadline = 500ms;
  lo.retry_period = 20ms;
  Start(lo);
  Run();
  kube::HttpResponse r;
  ASSERT_TRUE(Eventually([&] {
    r = Get("/readyz?verbose");
    // The volume is measured on the manager's upkeep thread, which may not
    // have run yet when the leader loop first reports.
    return r.body.find("[-]leader not leading\n") != std::string::npos &&
           r.body.find("[-]reconciler not started: standby, starts when this replica leads\n") !=
               std::string::npos &&
           r.body.find("[+]journal-volume ok: ") != std::string::npos;
  })) << r.body;
  EXPECT_EQ(r.status, 503);
  EXPECT_TRUE(r.body.ends_with("readyz check failed\n")) << r.body;
  // The pod's readiness probe: a standby that could take over is ready, so a
  // PodDisruptionBudget lets one of two replicas be drained at a time.
  const kube::HttpResponse standby = Get("/readyz?exclude=leader");
  EXPECT_EQ(standby.status, 200) << standby.body;
  EXPECT_EQ(standby.body, "ready\n");
  EXPECT_EQ(Get("/readyz?verbose&exclude=leader").body,
            "[+]journal ok\n"
            "[+]journal-volume ok: 100.0 MB free of 1000.0 MB\n"
            "[+]leader excluded: ok\n"
            "readyz check passed\n");
  EXPECT_EQ(Get("/readyz").status, 503);  // the contract's /readyz still says it does not lead
  EXPECT_NE(Get("/metrics").body.find("fencekeeper_ready 0"), std::string::npos);
}

// `--namespace does-not-exist` (issue 19 item 6): said, listed and counted,
// while the replica stays ready for the namespaces it can protect.
TEST_F(Readyz, AWatchedNamespaceThatDoesNotExistIsListedButKeepsItReady) {
  namespaces_ = {"ns-a", "does-not-exist"};
  Start();
  Run();
  ASSERT_TRUE(Eventually([&] { return Get("/readyz").status == 200; }));
  kube::HttpResponse r;
  ASSERT_TRUE(Eventually([&] {
    r = Get("/readyz?verbose");
    return r.body.find("[+]coverage does-not-exist ok: the namespace does not exist") !=
           std::string::npos;
  })) << r.body;
  EXPECT_NE(r.body.find("[+]coverage ok: 1 of 2 watched namespace(s) covered\n"), std::string::npos)
      << r.body;
  EXPECT_EQ(r.status, 200);
  const std::string metrics = Get("/metrics").body;
  EXPECT_NE(metrics.find("fencekeeper_watched_namespaces{state=\"missing\"} 1"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("fencekeeper_watched_namespaces{state=\"covered\"} 1"), std::string::npos);
  EXPECT_EQ(LogLines("watched namespace not covered"), 1);
}

// Excluding the leader leaves out only what a leader alone can pass: a
// leader's unsynced cache, or a journal that cannot be written, still count.
TEST(ReadinessExclusion, ExcludingTheLeaderKeepsEveryCheckALeaderCouldFailAnyway) {
  using reconciler::ReadinessCheck;
  const std::vector<ReadinessCheck> leading = {{"journal", true, ""},
                                               {"leader", true, "", true},
                                               {"informer pods/ns-a", false, "not synced"}};
  EXPECT_FALSE(reconciler::AllReady(reconciler::Excluding(leading, {"leader"})));
  EXPECT_EQ(reconciler::Excluding(leading, {"leader"}).size(), 2u);
  const std::vector<ReadinessCheck> standby = {{"journal", false, "not writable", false},
                                               {"leader", false, "not leading", true},
                                               {"reconciler", false, "not started: standby", true}};
  const auto rest = reconciler::Excluding(standby, {"leader"});
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].name, "journal");
  EXPECT_FALSE(reconciler::AllReady(rest));
  // By name, as kube-apiserver: several, and unknown names ignored.
  EXPECT_EQ(reconciler::Excluding(leading, {"journal", "informer pods/ns-a", "etcd"}).size(), 1u);
  EXPECT_EQ(reconciler::Excluding(leading, {}).size(), 3u);
}

// A watched namespace that holds nothing is named with zeros, not left out.
TEST(ScopeLog, CacheSummaryCountsPerNamespaceIncludingEmptyOnes) {
  fk::testing::MapCache cache;
  auto obj = [](const std::string& ns, const std::string& name) {
    return std::make_shared<const boost::json::value>(
        boost::json::object{{"metadata", {{"namespace", ns}, {"name", name}}}});
  };
  using Kind = reconciler::CacheKind;
  cache.Put(Kind::kSandboxes, "a", "s1", obj("a", "s1"));
  cache.Put(Kind::kSandboxes, "a", "s2", obj("a", "s2"));
  cache.Put(Kind::kPolicies, "a", domain::kWorkloadPolicyName,
            obj("a", domain::kWorkloadPolicyName));
  // Not a fence, cached all the same: the effective fence reads every policy.
  cache.Put(Kind::kPolicies, "a", "other", obj("a", "other"));
  cache.Put(Kind::kPods, "a", "p1", obj("a", "p1"));
  EXPECT_EQ(reconciler::CacheSummary(cache, {"a", "typo-ns"}),
            "2 sandboxes, 2 policies, 1 pods in 2 namespace(s) (a: 2 sandboxes, 2 policies, 1 "
            "pods; typo-ns: 0 sandboxes, 0 policies, 0 pods)");
  EXPECT_EQ(reconciler::ScopeText({}), "all namespaces");
  EXPECT_EQ(reconciler::ScopeText({"a", "b"}), "namespaces a, b");
  fk::testing::MapCache empty;
  EXPECT_EQ(reconciler::CacheSummary(empty, {}),
            "0 sandboxes, 0 policies, 0 pods in 0 namespace(s)");
}

}  // namespace
}  // namespace fk
