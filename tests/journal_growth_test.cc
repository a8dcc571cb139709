// The journal seen from the reconciler (docs/design.md#the-journal-contract): it grows with
// changes, not with time (a PATCH refused for ten simulated minutes, a
// sandbox deleted from the cluster), and a full disk, I/O errors or a power
// loss never leave a PATCH without a durable intent. Issue #9 reproduced over
// the in-process API simulator, a FakeTransport that can refuse, a real
// journal (through a fault-injecting SQLite VFS where it matters) and a
// manual clock; rows are counted in the journal file.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json.hpp>
#include <iostream>

#include "cli/commands.h"
#include "fake_transport.h"
#include "fault_vfs.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "kube/json_fields.h"
#include "kube/objects.h"
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

constexpr const char* kCollection = fk::testing::kNsSandboxesPath;
// "a" (and b, c) admitted under fence generation 1; the fence is at 2: suspend it.
constexpr const char* kScenario = fk::testing::kThreeStaleSandboxes;

class JournalGrowthTest : public ::testing::Test {
 protected:
  void SetUp() override { Boot(); }

  // A cluster, a journal at path_ (through `vfs`, "" = SQLite's default) and
  // a reconciler over them.
  void Boot(const std::string& vfs = "") {
    reconciler_.reset();
    client_.reset();
    journal_.reset();
    auto sim = fk::testing::SimulatorFrom(kScenario, time_);
    ASSERT_TRUE(sim.ok()) << sim.status().ToString();
    sim_ = std::move(*sim);
    journal::OpenOptions jo;
    jo.clock = &time_;
    jo.vfs = vfs;
    auto j = journal::Journal::Open(path_, jo);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
    auto transport = fk::testing::InProcessTransport(
        *sim_,
        [this](const kube::HttpRequest& r,
               const fk::testing::Forward& forward) -> Result<kube::HttpResponse> {
          if (r.method == "PATCH") patch_bodies_.push_back(r.body);
          if (r.method == "PATCH" && on_patch_) on_patch_();
          if (r.method == "PATCH" && refusal_) return *refusal_;
          return forward();
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
    const json::value list = fk::testing::SimGet(*sim_, collection);
    for (const auto& item : list.at("items").as_array()) {
      cache_.Put(kind, "ns", kube::MetadataString(item, "name"),
                 std::make_shared<const json::value>(item));
    }
  }

  // The journal seqs the PATCHes sent named.
  std::vector<int64_t> PatchedSeqs() const {
    std::vector<int64_t> seqs;
    for (const std::string& body : patch_bodies_) {
      const json::value v = json::parse(body);
      seqs.push_back(std::stoll(
          std::string(v.at("metadata").at("annotations").at(kube::kSeqAnnotation).as_string())));
    }
    return seqs;
  }
  // Every PATCH sent names an intent that is in the journal file.
  void ExpectEveryPatchHasADurableIntent() {
    for (int64_t seq : PatchedSeqs()) {
      EXPECT_EQ(Rows("SELECT count(*) FROM events WHERE kind = 'suspend_intent' AND seq = " +
                     std::to_string(seq)),
                1)
          << "PATCH sent for journal seq " << seq << ", which is not a durable intent";
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
      if (reconciler_->Reconcile({"ns", "a"}).next != Next::kRetry) break;
    }
    return passes;
  }

  std::string ReplayCheckErrors() {
    std::ostringstream out, err;
    cli::ReplayOptions o;
    o.journals = {path_};
    o.check = true;
    cli::RunReplay(o, out, err);
    return err.str();
  }

  ManualTimeSource time_;
  fk::testing::TempDir dir_;
  testing::FaultVfs vfs_;  // outlives the journal opened through it
  std::string path_ = dir_.File("journal.db");
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<kube::ApiClient> client_;
  fk::testing::MapCache cache_;
  std::unique_ptr<SandboxReconciler> reconciler_;
  std::optional<kube::HttpResponse> refusal_;
  std::vector<std::string> patch_bodies_;
  std::function<void()> on_patch_;
};

}  // namespace
}  // namespace fk::reconciler

namespace fk::kube {
// gtest names the parameter in its output; the status says it all.
void PrintTo(const HttpResponse& r, std::ostream* os) { *os << "HTTP " << r.status; }
}  // namespace fk::kube

namespace fk::reconciler {
namespace {

class PersistentRefusal : public JournalGrowthTest,
                          public ::testing::WithParamInterface<kube::HttpResponse> {};

// Issue #9: "a PATCH that keeps being refused appends 4 rows per retry, every
// <= 60 s, forever". Retried every 5 s (harsher than any backoff) for 10
// simulated minutes, the journal holds the first attempt's rows and nothing
// more; every PATCH sent carries that one durable intent's seq.
TEST_P(PersistentRefusal, AppendsABoundedNumberOfRowsInTenMinutes) {
  refusal_ = GetParam();
  ASSERT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
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
    EXPECT_NE(body.find(std::string("\"") + kube::kSeqAnnotation + "\":\"" +
                        std::to_string(intent) + "\""),
              std::string::npos)
        << body;
  }
  // The refusal ends: the same intent is applied, recorded with the sandbox
  // its PATCH returned (outcome, observation, decision: 3 rows, one commit).
  refusal_.reset();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Rows() - after_first, 3);
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
  ASSERT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  ASSERT_EQ(Rows("SELECT count(*) FROM sandbox_state WHERE sandbox = 'a'"), 1);
  sim::HandleRequest(*sim_, {"DELETE", std::string(kCollection) + "/a", "", ""}, "sim");
  Refresh(Kind::kSandboxes, kCollection);
  const int64_t before = Rows();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Rows() - before, 1);
  EXPECT_EQ(Rows("SELECT count(*) FROM forgotten_sandboxes WHERE sandbox = 'a'"), 1);
  EXPECT_EQ(Rows("SELECT count(*) FROM sandbox_state"), 0);
  EXPECT_TRUE(journal_->state().sandboxes.empty());
  EXPECT_EQ(Rows("SELECT count(*) FROM transitions WHERE outcome = 'applied'"),
            1);  // history stays
  // Nothing more once forgotten: no read, no row.
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Rows() - before, 1);
  EXPECT_EQ(ReplayCheckErrors(), "");
}

// The name now belongs to a new sandbox (new uid) the cache has not seen:
// the old uid is forgotten, the new one is left to its own first evaluation.
TEST_F(JournalGrowthTest, SandboxRecreatedUnderTheSameNameForgetsTheOldUid) {
  ASSERT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  const std::string old_uid = journal_->state().sandboxes.begin()->first.str();
  sim::HandleRequest(*sim_, {"DELETE", std::string(kCollection) + "/a", "", ""}, "sim");
  sim::HandleRequest(
      *sim_,
      {"POST", kCollection, R"({"metadata":{"name":"a"},"spec":{"operatingMode":"Running"}})",
       "application/json"},
      "sim");
  cache_.Put(Kind::kSandboxes, "ns", "a", nullptr);  // the cache saw the delete, not the create
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_FALSE(journal_->state().sandboxes.contains(old_uid));
  EXPECT_EQ(Rows("SELECT count(*) FROM forgotten_sandboxes WHERE detail LIKE "
                 "'name now belongs to uid %' AND sandbox_uid = '" +
                 old_uid + "'"),
            1);
  EXPECT_EQ(ReplayCheckErrors(), "");
}

// A cache that merely lags (the sandbox is still on the server) forgets nothing.
TEST_F(JournalGrowthTest, SandboxMissingOnlyFromTheCacheIsNotForgotten) {
  ASSERT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  cache_.Put(Kind::kSandboxes, "ns", "a", nullptr);
  const int64_t before = Rows();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Rows(), before);
  EXPECT_EQ(journal_->state().sandboxes.size(), 1u);
}

// Issue #9: the disk fills (SQLITE_FULL from the VFS, no test seam in the
// journal) right after a PATCH, then fsync fails. The outcome stays pending,
// no PATCH goes out for an intent that is not on disk, readiness is false,
// and everything resumes without a restart once writes succeed.
TEST_F(JournalGrowthTest, DiskFullAndIoErrorsMidRolloutNeverSendAPatchWithoutADurableIntent) {
  testing::FaultVfs& vfs = vfs_;
  Boot(vfs.name());
  ASSERT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  // The disk fills while b's PATCH is in flight: its outcome cannot be written.
  on_patch_ = [&] { vfs.fail_writes = SQLITE_FULL; };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "b"}).next, Next::kRetry);
  on_patch_ = nullptr;
  EXPECT_FALSE(reconciler_->JournalWritable());
  EXPECT_EQ(reconciler_->Reconcile({"ns", "c"}).next, Next::kRetry);  // no intent: no PATCH
  EXPECT_EQ(patch_bodies_.size(), 2u);
  vfs.fail_writes = SQLITE_OK;
  vfs.fail_syncs = SQLITE_IOERR_FSYNC;  // now fsync fails
  EXPECT_EQ(reconciler_->Reconcile({"ns", "c"}).next, Next::kRetry);
  EXPECT_EQ(patch_bodies_.size(), 2u);
  EXPECT_FALSE(reconciler_->JournalWritable());
  vfs.fail_syncs = SQLITE_OK;
  EXPECT_EQ(reconciler_->Reconcile({"ns", "b"}).next, Next::kDone);  // settled by reading
  EXPECT_EQ(reconciler_->Reconcile({"ns", "c"}).next, Next::kDone);
  EXPECT_TRUE(reconciler_->JournalWritable());
  EXPECT_EQ(patch_bodies_.size(), 3u);
  EXPECT_EQ(Rows("SELECT count(*) FROM transitions WHERE outcome = 'applied'"), 3);
  EXPECT_EQ(Rows("SELECT count(*) FROM transitions"), 3);
  ExpectEveryPatchHasADurableIntent();
  EXPECT_EQ(ReplayCheckErrors(), "");
}

// Issue #9, in the manner of SQLite's crash tests: the power fails at the
// n-th fsync of a rollout, for every n; the writes no fsync made durable are
// lost; the journal is reopened. Every intent a PATCH was sent for is there.
TEST_F(JournalGrowthTest, PowerLossAtAnySyncKeepsEveryIntentThatWasActedOn) {
  testing::FaultVfs& vfs = vfs_;
  int crash_points = 0;
  for (int n = 1;; ++n) {
    path_ = dir_.File("power-" + std::to_string(n) + ".db");
    patch_bodies_.clear();
    Boot(vfs.name());
    vfs.CrashAtSync(n);
    for (const char* name : {"a", "b", "c"}) {
      if (vfs.crashed()) break;
      reconciler_->Reconcile({"ns", name});
    }
    const bool crashed = vfs.crashed();
    reconciler_.reset();
    journal_.reset();  // the process is gone with the power
    vfs.LosePower(path_);
    vfs.CrashAtSync(0);
    // Past the last fsync of the rollout, the power fails after it instead.
    SCOPED_TRACE(crashed ? "power lost at fsync " + std::to_string(n) : "power lost at the end");
    {
      auto reopened = journal::Journal::Open(path_);
      ASSERT_TRUE(reopened.ok()) << reopened.status().ToString();
      auto ic = (*reopened)->IntegrityCheck();
      ASSERT_TRUE(ic.ok());
      EXPECT_EQ(*ic, "ok");
    }
    ExpectEveryPatchHasADurableIntent();
    if (!crashed) break;
    ++crash_points;
  }
  std::cout << "power lost at each of " << crash_points << " fsyncs of a 3-sandbox rollout"
            << std::endl;
  EXPECT_GE(crash_points, 6);
}

}  // namespace
}  // namespace fk::reconciler
