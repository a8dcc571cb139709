// The journal grows with changes, not with time (DESIGN §4), seen from the
// reconciler: a PATCH refused for ten simulated minutes, and a sandbox
// deleted from the cluster. Issue #9 reproduced over the in-process API
// simulator, a FakeTransport that can refuse, a real journal and a manual
// clock; rows are counted in the journal file.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json.hpp>
#include <iostream>

#include "cli/commands.h"
#include "kube/fake_transport.h"
#include "kube/json_fields.h"
#include "map_cache.h"
#include "reconciler/sandbox_reconciler.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using Next = ReconcileResult::Next;
using Kind = fk::testing::MapCache::Kind;

constexpr const char* kCollection = "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";

// "a" was admitted under fence generation 1; the fence is at 2: suspend it.
constexpr const char* kScenario = R"(
namespaces:
  - name: ns
    fence: {generation: 2}
    sandboxes:
      - {name: a, mode: Running, admittedFenceGeneration: 1}
)";

class JournalGrowthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::SimOptions so;
    so.emulate_agent_sandbox = false;
    sim_ = std::make_unique<sim::Simulator>(so, time_);
    auto scenario = sim::ParseScenario(kScenario, "test");
    ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
    ASSERT_TRUE(sim::ApplyScenario(*sim_, *scenario).ok());
    journal::OpenOptions jo;
    jo.clock = &time_;
    auto j = journal::Journal::Open(path_, jo);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
    auto transport = std::make_unique<kube::FakeTransport>(
        [this](const kube::HttpRequest& r) -> Result<kube::HttpResponse> {
          if (r.method == "PATCH") patch_bodies_.push_back(r.body);
          if (r.method == "PATCH" && refusal_) return *refusal_;
          sim::ApiReply a =
              sim::HandleRequest(*sim_, {r.method, r.target, r.body, r.content_type}, "sim");
          return kube::HttpResponse{a.status, a.body, a.content_type, std::nullopt};
        });
    kube::ClientOptions co;
    co.time = &time_;
    co.qps = 0;
    client_ = kube::ApiClient::CreateWithTransport({}, co, std::move(transport));
    reconciler_ = std::make_unique<SandboxReconciler>(cache_, *client_, *journal_, time_, nullptr,
                                                      nullptr, ReconcilerOptions{});
    Refresh(Kind::kSandboxes, kCollection);
    Refresh(Kind::kPods, "/api/v1/namespaces/ns/pods");
    Refresh(Kind::kPolicies, "/apis/networking.k8s.io/v1/namespaces/ns/networkpolicies");
  }

  // The cache of one kind catches up with the server.
  void Refresh(Kind kind, const std::string& collection) {
    cache_.Clear(kind);
    const json::value list =
        json::parse(sim::HandleRequest(*sim_, {"GET", collection, "", ""}, "sim").body);
    for (const auto& item : list.at("items").as_array()) {
      cache_.Put(kind, "ns", kube::MetadataString(item, "name"),
                 std::make_shared<const json::value>(item));
    }
  }

  int64_t Rows(const std::string& sql = "SELECT count(*) FROM events") {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }

  // Reconciles "a" as a work queue would, every `period` of simulated time
  // while it asks to be retried, for `span`. Returns the passes made.
  int RetryFor(std::chrono::milliseconds span, std::chrono::milliseconds period) {
    int passes = 0;
    for (auto elapsed = 0ms; elapsed < span; elapsed += period, time_.Advance(period)) {
      ++passes;
      if (reconciler_->Reconcile("ns", "a").next != Next::kRetry) break;
    }
    return passes;
  }

  std::string ReplayCheckErrors() {
    std::ostringstream out, err;
    cli::ReplayOptions o;
    o.journal = path_;
    o.check = true;
    cli::RunReplay(o, out, err);
    return err.str();
  }

  ManualTimeSource time_;
  fk::testing::TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<kube::ApiClient> client_;
  fk::testing::MapCache cache_;
  std::unique_ptr<SandboxReconciler> reconciler_;
  std::optional<kube::HttpResponse> refusal_;
  std::vector<std::string> patch_bodies_;
};

class PersistentRefusal : public JournalGrowthTest,
                          public ::testing::WithParamInterface<kube::HttpResponse> {};

// Issue #9: "a PATCH that keeps being refused appends 4 rows per retry, every
// <= 60 s, forever". Retried every 5 s (harsher than any backoff) for 10
// simulated minutes, the journal holds the first attempt's rows and nothing
// more; every PATCH sent carries that one durable intent's seq.
TEST_P(PersistentRefusal, AppendsABoundedNumberOfRowsInTenMinutes) {
  refusal_ = GetParam();
  ASSERT_EQ(reconciler_->Reconcile("ns", "a").next, Next::kRetry);
  const int64_t after_first = Rows();
  const int passes = RetryFor(10min, 5s);
  const int64_t appended = Rows() - after_first;
  std::cout << "HTTP " << GetParam().status << " for 10 simulated minutes: " << passes
            << " retries, " << patch_bodies_.size() << " PATCHes, " << appended
            << " journal rows appended after the first attempt (" << after_first
            << " in all before)" << std::endl;
  EXPECT_EQ(passes, 120);
  EXPECT_EQ(appended, 0);
  EXPECT_LE(after_first, 6);
  EXPECT_EQ(Rows("SELECT count(*) FROM transitions"), 1);
  EXPECT_EQ(Rows("SELECT count(*) FROM transitions WHERE outcome = 'failed'"), 1);
  // Write-ahead holds: every PATCH names the one intent on disk.
  ASSERT_EQ(patch_bodies_.size(), 121u);
  const int64_t intent = Rows("SELECT seq FROM transitions");
  for (const std::string& body : patch_bodies_) {
    EXPECT_NE(
        body.find("\"openshell.ai/fail-closed-journal-seq\":\"" + std::to_string(intent) + "\""),
        std::string::npos)
        << body;
  }
  // The refusal ends: the same intent is applied, one more row.
  refusal_.reset();
  EXPECT_EQ(reconciler_->Reconcile("ns", "a").next, Next::kDone);
  EXPECT_EQ(Rows() - after_first, 1);
  EXPECT_EQ(Rows("SELECT count(*) FROM transitions WHERE outcome = 'applied'"), 1);
  EXPECT_EQ(ReplayCheckErrors(), "");
}

INSTANTIATE_TEST_SUITE_P(
    JournalGrowth, PersistentRefusal,
    ::testing::Values(
        kube::HttpResponse{403,
                           R"({"kind":"Status","code":403,"reason":"Forbidden",)"
                           R"("message":"admission webhook \"deny.example\" denied the request"})",
                           "application/json", std::nullopt},
        kube::HttpResponse{422,
                           R"({"kind":"Status","code":422,"reason":"Invalid",)"
                           R"("message":"spec.operatingMode: Unsupported value"})",
                           "application/json", std::nullopt}),
    [](const auto& info) { return "Http" + std::to_string(info.param.status); });

// Issue #9: deleted sandboxes never left the projections or memory. Gone
// from the cache and confirmed gone by a read: `forgotten`, history kept (a
// re-created sandbox of the same name: JournalTest.ForgottenSandbox...).
TEST_F(JournalGrowthTest, DeletedSandboxIsForgottenAndItsHistoryKept) {
  ASSERT_EQ(reconciler_->Reconcile("ns", "a").next, Next::kDone);
  ASSERT_EQ(Rows("SELECT count(*) FROM sandbox_state WHERE sandbox = 'a'"), 1);
  sim::HandleRequest(*sim_, {"DELETE", std::string(kCollection) + "/a", "", ""}, "sim");
  Refresh(Kind::kSandboxes, kCollection);
  const int64_t before = Rows();
  EXPECT_EQ(reconciler_->Reconcile("ns", "a").next, Next::kDone);
  EXPECT_EQ(Rows() - before, 1);
  EXPECT_EQ(Rows("SELECT count(*) FROM forgotten_sandboxes WHERE sandbox = 'a'"), 1);
  EXPECT_EQ(Rows("SELECT count(*) FROM sandbox_state"), 0);
  EXPECT_TRUE(journal_->state().sandboxes.empty());
  EXPECT_EQ(Rows("SELECT count(*) FROM transitions WHERE outcome = 'applied'"),
            1);  // history stays
  // Nothing more once forgotten: no read, no row.
  EXPECT_EQ(reconciler_->Reconcile("ns", "a").next, Next::kDone);
  EXPECT_EQ(Rows() - before, 1);
  EXPECT_EQ(ReplayCheckErrors(), "");
}

// A cache that merely lags (the sandbox is still on the server) forgets nothing.
TEST_F(JournalGrowthTest, SandboxMissingOnlyFromTheCacheIsNotForgotten) {
  ASSERT_EQ(reconciler_->Reconcile("ns", "a").next, Next::kDone);
  cache_.Put(Kind::kSandboxes, "ns", "a", nullptr);
  const int64_t before = Rows();
  EXPECT_EQ(reconciler_->Reconcile("ns", "a").next, Next::kDone);
  EXPECT_EQ(Rows(), before);
  EXPECT_EQ(journal_->state().sandboxes.size(), 1u);
}

}  // namespace
}  // namespace fk::reconciler
