// The compact journal (schema 5, docs/design.md#the-compact-journal): a
// sandbox's life fits the growth bound (counted in rows and pages, not
// time), the `events` view shows exactly the events the journal reads back
// (so every audit view keeps its meaning), and a schema-4 journal upgrades,
// keeps its history and replays.
#include <gtest/gtest.h>

#include <map>

#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json.hpp>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "domain/decision.h"
#include "domain/fold.h"
#include "journal/chain.h"
#include "journal/codec.h"
#include "journal/compact.h"
#include "journal/journal.h"
#include "journal/migrations.h"
#include "journal_fixture.h"
#include "replay_check.h"
#include "test_support.h"

namespace fk::journal {
namespace {
namespace json = boost::json;
using namespace fk::domain;
using fk::testing::Rows;
using fk::testing::TempDir;

// A Kubernetes-like uid: 36 characters, distinct per (kind, i).
std::string Uid(int kind, int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-5e3d-4000-8000-%012x", 0x1000 * kind + i, i);
  return buf;
}

// Sandbox `i` of namespace `ns` as the controller observes it when created
// healthy under fence generation 1 (the fence and pods with real-sized uids).
Snapshot Created(const std::string& ns, int i, int64_t now_ms) {
  Snapshot s;
  s.sandbox.ns = ns;
  s.sandbox.name = "sandbox-" + std::to_string(i);
  s.sandbox.uid = Uid(1, i);
  s.sandbox.generation = 1;
  s.sandbox.should_run = true;
  s.sandbox.fence_uid = Uid(0, 1);
  s.sandbox.fence_generation = 1;
  s.sandbox.workload_uid = Uid(2, i);
  s.sandbox.supervisor_uid = Uid(3, i);
  s.workload_fence = {true, Uid(0, 1), 1, true};
  s.supervisor_fence = {true, Uid(0, 2), 1, true};
  s.workload_pod = {true, Uid(2, i)};
  s.supervisor_pod = {true, Uid(3, i)};
  s.observed_at_ms = now_ms;
  return s;
}

class CompactJournalTest : public ::testing::Test {
 protected:
  std::unique_ptr<Journal> Open() { return fk::testing::OpenJournal(path_, &clock_); }
  Recorded Evaluate(Journal& j, const Snapshot& s, const std::string& rv = "100") {
    Snapshot with_history = s;
    with_history.history = history_for(j.state(), s.sandbox.uid);
    auto r = j.Record({with_history, decide(with_history), rv, "writer-0123456789abcdef"});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Recorded{};
  }
  // One lifecycle: created healthy, suspended by the fence roll (intent,
  // applied, the suspended sandbox observed and held), deleted.
  void Lifecycle(Journal& j, const std::string& ns, int i) {
    const int64_t now = clock_.NowMs();
    Evaluate(j, Created(ns, i, now));
    Snapshot stale = Created(ns, i, now + 5);
    stale.workload_fence.generation = 2;
    auto r = Evaluate(j, stale);
    ASSERT_TRUE(r.intent_seq);
    ASSERT_TRUE(j.RecordOutcome(*r.intent_seq, {Outcome::kApplied, 2, ""}).ok());
    Snapshot held = stale;
    held.sandbox.generation = 2;
    held.sandbox.should_run = false;
    held.observed_at_ms = now + 9;
    Evaluate(j, held);
    ASSERT_TRUE(j.Forget(held.sandbox.uid, "deleted from the cluster").ok()) << i;
  }
  int64_t Count(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }
  // Pages in use (not free) x page size, after a checkpoint.
  int64_t UsedBytes(Journal& j) {
    EXPECT_TRUE(j.Checkpoint().ok());
    return Count("PRAGMA page_count") * Count("PRAGMA page_size") -
           Count("PRAGMA freelist_count") * Count("PRAGMA page_size");
  }
  std::string ReplayCheck() { return testing::ReplayCheckErrors(path_); }

  ManualTimeSource clock_;
  TempDir dir_;
  std::string path_ = dir_.File("journal.db");
};

TEST_F(CompactJournalTest, ASandboxLifeCostsAtMostOneAndAHalfKiB) {
  auto j = Open();
  Evaluate(*j, Created("agents", 0, clock_.NowMs()));  // the namespace's fences, recorded once
  const int64_t bytes_before = UsedBytes(*j);
  const int64_t rows_before = Count("SELECT count(*) FROM journal WHERE kind <> 1");
  const int64_t events_before = j->state().last_seq;
  constexpr int kLives = 400;
  for (int i = 1; i <= kLives; ++i) {
    Lifecycle(*j, "agents", i);
    if (i == 1) {
      EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
    }
  }
  const double bytes = double(UsedBytes(*j) - bytes_before) / kLives;
  // The namespace's fence roll is one row more, for every sandbox in it.
  const double rows =
      double(Count("SELECT count(*) FROM journal WHERE kind <> 1") - rows_before) / kLives;
  std::cout << "per sandbox lifecycle: " << bytes << " bytes, " << rows << " rows, "
            << double(j->state().last_seq - events_before) / kLives << " events\n";
  EXPECT_LE(bytes, 1536);  // at most 1.5 KiB, indexes and projections included
  // Created, roll (observation + decision + intent), outcome, held, forgotten.
  EXPECT_EQ(rows, 5);
  EXPECT_EQ(Count("SELECT count(*) FROM transitions WHERE outcome = 'applied'"), kLives);
  EXPECT_EQ(Count("SELECT count(*) FROM forgotten_sandboxes"), kLives);
  EXPECT_EQ(Count("SELECT count(*) FROM sandbox_state"), 1);  // only sandbox 0 is alive
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
}

// What the volume holds of the journal: the file and its WAL.
int64_t FileBytes(const std::string& path) {
  int64_t bytes = 0;
  for (const std::string& file : {path, path + "-wal"}) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (!ec) bytes += static_cast<int64_t>(size);
  }
  return bytes;
}

// Issue 36: what the volume holds, not only the pages in use. Sandboxes live
// in waves, as a churning namespace's do: a wave is created healthy,
// suspended by a fence roll and held, then deleted; the controller
// checkpoints when idle. The file and its WAL grow by at most 1 KiB a
// lifecycle: each row's hash is its 32 bytes (schema 10), and the pages a
// deleted wave's projections freed leave the file with the next idle
// checkpoint (auto_vacuum = INCREMENTAL) instead of waiting on the freelist.
TEST_F(CompactJournalTest, SandboxLivesInWavesGrowTheFileByAtMostOneKiBEach) {
  auto j = Open();
  Evaluate(*j, Created("agents", 0, clock_.NowMs()));  // the namespace's fences, recorded once
  ASSERT_TRUE(j->Checkpoint().ok());
  const int64_t file_before = FileBytes(path_);
  constexpr int kWaves = 4, kPerWave = 100;
  for (int w = 0; w < kWaves; ++w) {
    const int first = 1 + w * kPerWave;
    std::vector<int64_t> intents;
    for (int i = first; i < first + kPerWave; ++i)
      Evaluate(*j, Created("agents", i, clock_.NowMs()));
    for (int i = first; i < first + kPerWave; ++i) {
      Snapshot stale = Created("agents", i, clock_.NowMs() + 5);
      stale.workload_fence.generation = 2;
      auto r = Evaluate(*j, stale);
      ASSERT_TRUE(r.intent_seq);
      ASSERT_TRUE(j->RecordOutcome(*r.intent_seq, {Outcome::kApplied, 2, ""}).ok());
      stale.sandbox.generation = 2;
      stale.sandbox.should_run = false;
      Evaluate(*j, stale);
    }
    ASSERT_TRUE(j->Checkpoint().ok());  // idle between the roll and the deletions
    for (int i = first; i < first + kPerWave; ++i)
      ASSERT_TRUE(j->Forget(Uid(1, i), "deleted from the cluster").ok()) << i;
    ASSERT_TRUE(j->Checkpoint().ok());
  }
  const double per_life = double(FileBytes(path_) - file_before) / (kWaves * kPerWave);
  std::cout << "file + WAL per sandbox lifecycle: " << per_life << " bytes\n";
  EXPECT_LE(per_life, 1024);
  EXPECT_EQ(Count("PRAGMA freelist_count"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM journal WHERE typeof(hash) <> 'blob'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM sandbox_state"), 1);  // only sandbox 0 is alive
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
}

// Every event the journal reads back, as the `events` view shows it: the
// same seq, time, kind, subject, ref and payload (the JSON of schema 4).
void ExpectViewShowsEvents(Journal& j, const std::string& path) {
  std::vector<Event> events;
  ASSERT_TRUE(j.ForEachEvent(1, j.state().last_seq, [&](const Event& e) {
                 events.push_back(e);
                 return Status::Ok();
               }).ok());
  ASSERT_EQ(events.size(), static_cast<size_t>(j.state().last_seq));
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db,
                      "SELECT seq, recorded_at, kind, namespace, name, uid, "
                      "COALESCE(ref_seq, 0), payload FROM events ORDER BY seq");
  // Rows of schema 1-4 are shown as they were stored: a field added later
  // (an intent's writer) is absent there and reads as its default.
  const int64_t last_legacy =
      db.execAndGet("SELECT COALESCE(max(seq), 0) FROM events_v1").getInt64();
  size_t i = 0;
  for (; q.executeStep() && i < events.size(); ++i) {
    const Event& e = events[i];
    SCOPED_TRACE("seq " + std::to_string(e.seq) + " " + ToString(e.kind()));
    EXPECT_EQ(q.getColumn(0).getInt64(), e.seq);
    EXPECT_EQ(q.getColumn(1).getString(), e.recorded_at);
    EXPECT_EQ(q.getColumn(2).getString(), ToString(e.kind()));
    EXPECT_EQ(q.getColumn(3).getString() + "/" + q.getColumn(4).getString() + "/" +
                  q.getColumn(5).getString(),
              e.ns + "/" + e.name + "/" + e.uid);
    EXPECT_EQ(q.getColumn(6).getInt64(), e.ref_seq);
    const std::string payload = q.getColumn(7).getString();
    auto decoded = DecodePayload(e.kind(), payload);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_TRUE(*decoded == e.body);
    if (e.seq > last_legacy) {
      EXPECT_EQ(json::parse(payload), json::parse(EncodePayload(e.body)));
    }
  }
  EXPECT_EQ(i, events.size());
}

TEST_F(CompactJournalTest, EventsViewShowsWhatTheJournalReadsBack) {
  auto j = Open();
  Evaluate(*j, testing::HealthySnapshot("a"));
  Evaluate(*j, testing::HealthySnapshot("b"));
  auto a = Evaluate(*j, testing::StaleSnapshot("a"));
  ASSERT_TRUE(j->RecordOutcome(*a.intent_seq, {Outcome::kApplied, 3, ""}).ok());
  auto b = Evaluate(*j, testing::StaleSnapshot("b"), "7");
  ASSERT_TRUE(j->RecordOutcome(*b.intent_seq, {Outcome::kFailed, std::nullopt, "403 no"}).ok());
  Snapshot admitting = Created("other", 1, clock_.NowMs());
  admitting.sandbox.bootstrapping = true;
  admitting.sandbox.bootstrap_op = BootstrapOp::kCreate;
  admitting.sandbox.bootstrap_phase = "preparing";
  admitting.sandbox.bootstrap_started_at_ms = clock_.NowMs() - 1000;
  admitting.sandbox.fence_uid = "an-older-fence";  // not the observed one: spelled out
  admitting.sandbox.fence_generation = std::nullopt;
  admitting.workload_pod = {false, "", false};
  admitting.supervisor_fence = {};
  admitting.sandbox.api_version = ApiVersion::kV1alpha1;
  admitting.observed_at_ms -= 3;  // observed before it was recorded
  Evaluate(*j, admitting);
  admitting.supervisor_fence = {true, Uid(0, 9), 4, false};  // altered: suspend
  admitting.sandbox.bootstrapping = false;
  auto c = Evaluate(*j, admitting);
  ASSERT_TRUE(c.intent_seq);
  Event lease;
  lease.ns = "kube-system";
  lease.name = "fencekeeper";
  lease.body = Leadership{"host-1_abc", "acquired"};
  ASSERT_TRUE(j->Append({lease}).ok());
  ASSERT_TRUE(j->Forget(Uid(1, 1), "deleted from the cluster").ok());  // c's intent superseded
  ExpectViewShowsEvents(*j, path_);
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
  // And after a restart, from the projections.
  j.reset();
  j = Open();
  Evaluate(*j, testing::HealthySnapshot("a"));  // a new observation of a known sandbox
  ExpectViewShowsEvents(*j, path_);
  EXPECT_EQ(Count("SELECT count(*) FROM subjects WHERE uid = 'uid-agents-a'"), 1);
}

// Schema 9: a spare and the widening policies, in the compact row. Absent
// (the common case) they cost nothing: no key at all, as before.
TEST_F(CompactJournalTest, SpareAndWideningPoliciesRoundTripInCompactRows) {
  const Snapshot plain = Created("agents", 1, 0);
  const json::object none = compact::Compact(plain, 0);
  EXPECT_FALSE(none.contains("s")) << none;
  EXPECT_FALSE(none.contains("bp")) << none;
  Snapshot wide = plain;
  wide.sandbox.spare = true;
  wide.bypass = {{"allow-dns", Uid(4, 1), 3, Widens::kEgress},
                 {"ssh", Uid(4, 2), 1, Widens::kBoth}};
  const json::object both = compact::Compact(wide, 0);
  EXPECT_EQ(both.at("s"), 1);
  EXPECT_EQ(both.at("bp"), json::parse(R"([["allow-dns",")" + Uid(4, 1) + R"(",3,1],["ssh",")" +
                                       Uid(4, 2) + R"(",1,3]])"));

  // Through the journal: the list in the base, shrunk, gone, back; a spare
  // becoming a sandbox; another sandbox's list added by a difference only.
  auto j = Open();
  std::vector<Snapshot> recorded;
  const auto record = [&](Snapshot s) {
    s.history = history_for(j->state(), s.sandbox.uid);
    s.observed_at_ms = clock_.NowMs();
    auto r = j->Record({s, decide(s), "1", "writer-1"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    recorded.push_back(s);
    clock_.Advance(std::chrono::seconds(1));
  };
  Snapshot a = wide;
  record(a);
  a.bypass.pop_back();
  record(a);
  a.bypass.clear();
  a.sandbox.spare = false;
  record(a);
  a.bypass = wide.bypass;
  a.bypass[1].generation = 2;
  record(a);
  Snapshot b = Created("agents", 2, 0);
  record(b);
  b.bypass = {{"allow-all", Uid(4, 3), 7, Widens::kIngress}};
  record(b);
  std::vector<Snapshot> read;
  ASSERT_TRUE(j->ForEachEvent(1, j->state().last_seq, [&](const Event& e) {
                 if (const auto* o = std::get_if<SandboxObserved>(&e.body))
                   read.push_back(o->snapshot);
                 return Status::Ok();
               }).ok());
  ASSERT_EQ(read.size(), recorded.size()) << "each observation changed a field: each is recorded";
  for (size_t i = 0; i < read.size(); ++i) {
    EXPECT_TRUE(read[i] == recorded[i]) << i << ": " << EncodeSnapshot(read[i]);
  }
  EXPECT_EQ(read[0].bypass.size(), 2u);
  EXPECT_TRUE(read[0].sandbox.spare);
  EXPECT_TRUE(read[2].bypass.empty());
  ExpectViewShowsEvents(*j, path_);
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
  j.reset();
  j = Open();  // and from the projections
  EXPECT_TRUE(testing::RecordedObservation(path_, b.sandbox.uid).bypass == b.bypass);
}

// Every reason a decision or an intent can carry reads back from its row,
// fence-bypassed (code 6, schema 9) included.
TEST(CompactRows, EveryReasonReadsBack) {
  const std::vector<Reason> reasons = {Reason::kNone,
                                       Reason::kFenceMissing,
                                       Reason::kFenceAltered,
                                       Reason::kFenceStale,
                                       Reason::kWorkloadGenerationChanged,
                                       Reason::kSupervisorGenerationChanged,
                                       Reason::kFenceBypassed};
  for (const Reason reason : reasons) {
    SCOPED_TRACE(ToString(reason));
    Event decided, intent;
    decided.body = Decided{{Verdict::kSuspend, reason, Action::kPatchSuspend, "n", std::nullopt}};
    intent.body = SuspendIntent{reason, 2, "7", ApiVersion::kV1beta1, "n", "w"};
    for (const auto& [kind, event] :
         {std::pair{compact::RowKind::kDecided, &decided}, {compact::RowKind::kIntent, &intent}}) {
      const std::string body = compact::EncodeBody(kind, event, {}, 0);
      auto events = compact::DecodeRow(static_cast<int>(kind), body, {});
      ASSERT_TRUE(events.ok()) << body << ": " << events.status().ToString();
      ASSERT_EQ(events->size(), 1u);
      EXPECT_TRUE((*events)[0].body == event->body) << body;
    }
  }
  auto beyond = compact::DecodeRow(3, "[1,7,1]", {});
  EXPECT_EQ(beyond.status().code(), Code::kCorruption) << "no reason has code 7";
}

// A suspend history's seq and generations and a decision's re-evaluation
// time are kept as packed optionals, whose "absent" is the most negative
// integer: a row holding that value is corrupt, not read as "none".
TEST(CompactRows, TheMostNegativeIntegerIsNoSeqGenerationOrTime) {
  const std::string niche = "-9223372036854775808";
  const auto replaced = [](std::string body, const std::string& from, const std::string& to) {
    const size_t at = body.find(from);
    EXPECT_NE(at, std::string::npos) << body;
    return at == std::string::npos ? body : body.replace(at, from.size(), to);
  };
  Event decided;
  decided.body = Decided{{Verdict::kAdmitting, Reason::kNone, Action::kNone, "n", 5}};
  const std::string decision = compact::EncodeBody(compact::RowKind::kDecided, &decided, {}, 0);
  ASSERT_TRUE(compact::DecodeRow(static_cast<int>(compact::RowKind::kDecided), decision, {}).ok());
  auto bad = compact::DecodeRow(static_cast<int>(compact::RowKind::kDecided),
                                replaced(decision, ",5]", "," + niche + "]"), {});
  EXPECT_EQ(bad.status().code(), Code::kCorruption) << bad.status().ToString();

  for (const char* key : {"hp", "ha", "hd"}) {
    SCOPED_TRACE(key);
    Snapshot s = testing::HealthySnapshot("a");
    s.history.pending_intent_seq = 7;
    s.history.applied_generation = 8;
    s.history.dry_run_generation = 9;
    Event observed;
    observed.body = SandboxObserved{s};
    const std::string body = compact::EncodeBody(compact::RowKind::kObserved, &observed, {}, 0);
    const int kind = static_cast<int>(compact::RowKind::kObserved);
    auto good = compact::DecodeRow(kind, body, {});
    ASSERT_TRUE(good.ok()) << body << ": " << good.status().ToString();
    const std::string value = std::string(key) == "hp" ? "7" : std::string(key) == "ha" ? "8" : "9";
    const std::string field = "\"" + std::string(key) + "\":";
    auto broken = compact::DecodeRow(kind, replaced(body, field + value, field + niche), {});
    EXPECT_EQ(broken.status().code(), Code::kCorruption) << broken.status().ToString();
  }
}

TEST_F(CompactJournalTest, ACorruptRowIsReportedWithItsSeq) {
  auto j = Open();
  Evaluate(*j, testing::HealthySnapshot("a"));
  const int64_t seq = j->state().last_seq;
  j.reset();
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec("DROP TRIGGER journal_append_only_update");
    db.exec("UPDATE journal SET body = json_set(body, '$.d[0]', 99) WHERE seq = " +
            std::to_string(seq - 1));
  }
  auto reopened = Open();
  const Status s = reopened->ForEachEvent(1, seq, [](const Event&) { return Status::Ok(); });
  EXPECT_EQ(s.code(), Code::kCorruption);
  EXPECT_NE(s.message().find("event seq " + std::to_string(seq - 1)), std::string::npos)
      << s.message();
}

// The journal the last release wrote (schema 3, before writer ids and the
// compact journal) opens, upgrades through schema 4 and 5, and keeps every
// row of every contract view; its intents read with writer ''; new rows
// join it and it replays.
TEST_F(CompactJournalTest, TheLastReleasesJournalUpgradesKeepsItsHistoryAndReplays) {
  fk::testing::MakeJournalFromDump(path_, "journal_v3_release.sql");
  ASSERT_EQ(Count("PRAGMA user_version"), 3);
  const std::string transitions_sql =
      "SELECT seq, recorded_at, namespace, sandbox, sandbox_uid, action, reason, outcome, detail, "
      "observed_generation, applied_generation, outcome_seq, outcome_at FROM transitions ORDER BY "
      "seq";
  const std::vector<std::pair<std::string, std::string>> views = {
      {"transitions", transitions_sql},
      {"fence_observations", "SELECT * FROM fence_observations ORDER BY seq"},
      {"sandbox_state", "SELECT * FROM sandbox_state ORDER BY sandbox_uid"},
      {"decisions", "SELECT * FROM decisions ORDER BY seq"},
      {"leadership", "SELECT * FROM leadership ORDER BY seq"},
      {"forgotten_sandboxes", "SELECT * FROM forgotten_sandboxes ORDER BY seq"},
      {"events", "SELECT * FROM events ORDER BY seq"}};
  std::map<std::string, std::vector<std::string>> before;
  for (const auto& [view, sql] : views) before[view] = Rows(path_, sql);
  ASSERT_EQ(before["transitions"].size(), 3u);
  ASSERT_EQ(before["events"].size(), 61u);

  auto j = Open();
  ASSERT_TRUE(j);
  EXPECT_EQ(j->schema_version(), LatestSchemaVersion());
  EXPECT_EQ(j->state().sandboxes.size(), before["sandbox_state"].size());
  for (const auto& [view, sql] : views) EXPECT_EQ(Rows(path_, sql), before[view]) << view;
  EXPECT_EQ(Rows(path_, "SELECT DISTINCT writer FROM transitions"), std::vector<std::string>{""});
  EXPECT_EQ(Count("SELECT count(*) FROM writer_starts"), 0) << "upgrading records no start";
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();

  Snapshot s = testing::StaleSnapshot("after-upgrade");
  auto r = Evaluate(*j, s, "1");
  ASSERT_TRUE(r.intent_seq);
  EXPECT_GT(*r.intent_seq, 61);
  ExpectViewShowsEvents(*j, path_);
  j.reset();
  EXPECT_EQ(Open()->state().pending_intents.size(), 1u);
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
}

TEST_F(CompactJournalTest, ASchema4JournalUpgradesKeepsItsHistoryAndReplays) {
  fk::testing::MakeJournalFromDump(path_, "journal_v4_demo.sql");
  const auto transitions = Rows(path_, "SELECT * FROM transitions ORDER BY seq");
  const auto fences = Rows(path_, "SELECT * FROM fence_observations ORDER BY seq");
  const auto states = Rows(path_, "SELECT * FROM sandbox_state ORDER BY sandbox_uid");
  const auto decisions = Rows(path_, "SELECT * FROM decisions ORDER BY seq");
  const auto events = Rows(path_, "SELECT * FROM events ORDER BY seq");
  ASSERT_EQ(transitions.size(), 3u);
  ASSERT_EQ(Count("PRAGMA user_version"), 4);

  auto j = Open();
  ASSERT_TRUE(j);
  EXPECT_EQ(j->schema_version(), LatestSchemaVersion());
  EXPECT_EQ(j->state().sandboxes.size(), states.size());
  EXPECT_EQ(Rows(path_, "SELECT * FROM transitions ORDER BY seq"), transitions);
  EXPECT_EQ(Rows(path_, "SELECT * FROM fence_observations ORDER BY seq"), fences);
  EXPECT_EQ(Rows(path_, "SELECT * FROM sandbox_state ORDER BY sandbox_uid"), states);
  EXPECT_EQ(Rows(path_, "SELECT * FROM decisions ORDER BY seq"), decisions);
  EXPECT_EQ(Rows(path_, "SELECT * FROM events ORDER BY seq"), events);
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();

  // New rows join the old ones: a suspended sandbox of the old journal is
  // resumed and suspended again, another one is deleted.
  const std::string uid = j->state().sandboxes.begin()->first.str();
  const SandboxRecord held = j->state().sandboxes.begin()->second;
  ASSERT_TRUE(held.observed);
  Snapshot resumed = testing::RecordedObservation(path_, uid);
  resumed.sandbox.generation += 1;
  resumed.sandbox.should_run = true;
  auto r = Evaluate(*j, resumed, "999");
  ASSERT_TRUE(r.intent_seq);
  ASSERT_TRUE(
      j->RecordOutcome(*r.intent_seq, {Outcome::kApplied, resumed.sandbox.generation + 1, ""})
          .ok());
  const std::string gone = std::next(j->state().sandboxes.begin())->first.str();
  ASSERT_TRUE(j->Forget(gone, "deleted from the cluster").ok());
  EXPECT_EQ(Count("SELECT count(*) FROM transitions"), 4);
  EXPECT_EQ(Count("SELECT count(*) FROM events_v1"), static_cast<int64_t>(events.size()));
  ExpectViewShowsEvents(*j, path_);
  j.reset();
  j = Open();
  EXPECT_EQ(j->state().sandboxes.count(gone), 0u);
  EXPECT_EQ(j->state().sandboxes.at(fk::CompactString(uid)).history.applied_generation,
            resumed.sandbox.generation + 1);
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
}

// Every row of `journal` with its hash as 64 hex digits, whether stored as
// text (schemas 6-9) or as its 32 bytes (schema 10).
const std::string kJournalRowsSql = "SELECT seq, at, kind, subject, ref, body, " +
                                    chain::HexSql("hash") + " FROM journal ORDER BY seq";

// The schema-8 journal the last release wrote (tests/data/journal_v8_demo.sql:
// `run` against the simulator, three suspends, a resume, a deleted sandbox,
// two writer starts) upgrades through schema 9: every row and its hash stay (the
// head it verified at is still there), the contract views show what they
// showed, its observations read as no spare and nothing widening a fence,
// `fence_bypasses` is empty, and the new reason has its name. New rows with
// widening policies chain on and show in `fence_bypasses`.
TEST_F(CompactJournalTest, ASchema8JournalUpgradesKeepsItsRowsAndChainAndLearnsBypasses) {
  fk::testing::MakeJournalFromDump(path_, "journal_v8_demo.sql");
  ASSERT_EQ(Count("PRAGMA user_version"), 8);
  const std::vector<std::pair<std::string, std::string>> kept = {
      {"journal", kJournalRowsSql},
      {"subjects", "SELECT * FROM subjects ORDER BY id"},
      {"transitions", "SELECT * FROM transitions ORDER BY seq"},
      {"fence_observations", "SELECT * FROM fence_observations ORDER BY seq"},
      {"sandbox_state", "SELECT * FROM sandbox_state ORDER BY sandbox_uid"},
      {"decisions", "SELECT * FROM decisions ORDER BY seq"},
      {"writer_starts",
       "SELECT start, first_seq, writer, started_at FROM writer_starts ORDER BY start"}};
  // The events as schema 8 showed them: the new fields aside.
  const std::string events_sql =
      "SELECT seq, recorded_at, kind, namespace, name, uid, ref_seq, "
      "json_remove(payload, '$.sandbox.spare', '$.bypass', '$.dry_run', "
      "'$.history.dry_run_generation') FROM events ORDER BY seq";
  std::map<std::string, std::vector<std::string>> before;
  for (const auto& [name, sql] : kept) before[name] = Rows(path_, sql);
  const auto events_before = Rows(path_, events_sql);
  ASSERT_EQ(before["transitions"].size(), 4u);
  ASSERT_EQ(before["writer_starts"].size(), 2u);
  ASSERT_EQ(Count("SELECT count(*) FROM journal WHERE hash IS NULL"), 0);
  // The head fencekeeper 53f142f's `journal verify` printed for it (this
  // build's refuses a journal it has not migrated).
  const std::string head = "103:6f9ec4413ac334e856570cc53775e225f00b2efc6e0bf55dd328939a243b8371";
  const auto verify = [&] {
    std::ostringstream out, err;
    const int code = cli::RunJournalVerify({path_, head, std::nullopt}, out, err);
    return code == cli::kExitOk ? std::string() : out.str() + err.str();
  };

  auto j = Open();
  ASSERT_TRUE(j);
  EXPECT_EQ(j->schema_version(), LatestSchemaVersion());
  for (const auto& [name, sql] : kept) EXPECT_EQ(Rows(path_, sql), before[name]) << name;
  EXPECT_EQ(Rows(path_, events_sql), events_before);
  // Schema 11: every start before it enforced, and every observation says so.
  EXPECT_EQ(Rows(path_,
                 "SELECT DISTINCT enforcement || ' ' || dry_run_namespaces FROM "
                 "writer_starts"),
            std::vector<std::string>{"enforce []"});
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'sandbox_observed' AND "
                  "(json_type(payload, '$.dry_run') <> 'false' OR "
                  "json_type(payload, '$.history.dry_run_generation') <> 'null')"),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'sandbox_observed' AND "
                  "(json_extract(payload, '$.sandbox.spare') <> 0 OR "
                  "json_extract(payload, '$.bypass') <> '[]')"),
            0);
  EXPECT_GT(Count("SELECT count(*) FROM events WHERE kind = 'sandbox_observed' AND "
                  "json_type(payload, '$.sandbox.spare') = 'false' AND "
                  "json_type(payload, '$.bypass') = 'array'"),
            0);
  EXPECT_EQ(Count("SELECT count(*) FROM fence_bypasses"), 0);
  EXPECT_EQ(Rows(path_, "SELECT name FROM journal_names WHERE field = 'reason' AND code = 6"),
            std::vector<std::string>{"fence-bypassed"});
  EXPECT_EQ(verify(), "");
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();

  // A sandbox of the old journal, now behind a policy that widens its egress.
  const std::string uid = j->state().sandboxes.begin()->first.str();
  Snapshot widened = testing::RecordedObservation(path_, uid);
  widened.bypass = {{"allow-dns", Uid(4, 1), 1, Widens::kEgress}};
  Evaluate(*j, widened, "4242");
  ExpectViewShowsEvents(*j, path_);
  j.reset();
  EXPECT_EQ(Rows(path_, "SELECT sandbox_uid, policy, widens FROM fence_bypasses"),
            std::vector<std::string>{uid + "|allow-dns|egress"});
  EXPECT_EQ(Rows(path_, "SELECT reason FROM decisions ORDER BY seq DESC LIMIT 1"),
            std::vector<std::string>{"fence-bypassed"});
  EXPECT_EQ(verify(), "");
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
}

// Schema 10 (migrations/0010_hash_bytes.sql): a journal of an older schema
// upgrades to hashes stored as their 32 bytes with the same chain (the head
// kept before the upgrade verifies, with fencekeeper and with the stock
// shell), its file switched to incremental vacuum with no free page left; new
// rows chain on, and the head still reads as 64 hex digits.
class HashBytesUpgradeTest : public CompactJournalTest {
 protected:
  void ExpectUpgradeKeepsTheChain(const std::string& dump, const std::string& head) {
    fk::testing::MakeJournalFromDump(path_, dump);
    const auto rows = Rows(path_, kJournalRowsSql);
    ASSERT_EQ(Count("SELECT count(*) FROM journal WHERE typeof(hash) = 'text'"),
              static_cast<int64_t>(rows.size()));
    ASSERT_EQ(testing::StockShellVerify(path_).mismatches, 0);

    auto j = Open();
    ASSERT_TRUE(j);
    EXPECT_GE(j->schema_version(), 10);
    EXPECT_EQ(Rows(path_, kJournalRowsSql), rows);
    EXPECT_EQ(
        Count("SELECT count(*) FROM journal WHERE typeof(hash) = 'blob' AND length(hash) = 32"),
        static_cast<int64_t>(rows.size()));
    EXPECT_EQ(Rows(path_, "SELECT seq || ':' || hash FROM journal_head"),
              std::vector<std::string>{head});
    EXPECT_EQ(Count("PRAGMA auto_vacuum"), 2);  // INCREMENTAL
    EXPECT_EQ(Count("PRAGMA freelist_count"), 0);
    EXPECT_EQ(testing::StockShellVerify(path_).mismatches, 0);

    Evaluate(*j, testing::StaleSnapshot("after-upgrade"));
    const std::string new_head = j->ChainHead().ToString();
    EXPECT_NE(new_head, head);
    EXPECT_EQ(Rows(path_, "SELECT seq || ':' || hash FROM journal_head"),
              std::vector<std::string>{new_head});
    j.reset();
    for (const std::string& expect : {head, new_head}) {
      std::ostringstream out, err;
      EXPECT_EQ(cli::RunJournalVerify({path_, expect, std::nullopt}, out, err), cli::kExitOk)
          << out.str() << err.str();
      EXPECT_NE(out.str().find("head " + new_head), std::string::npos) << out.str();
    }
    EXPECT_EQ(testing::StockShellVerify(path_).mismatches, 0);
    EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
  }
};

// The released schema 8, through schema 9.
TEST_F(HashBytesUpgradeTest, ASchema8JournalKeepsItsChainWithHashesStoredAsBytes) {
  ExpectUpgradeKeepsTheChain(
      "journal_v8_demo.sql",
      "103:6f9ec4413ac334e856570cc53775e225f00b2efc6e0bf55dd328939a243b8371");
}

// The schema main wrote before this one (tests/data/journal_v9_demo.sql).
TEST_F(HashBytesUpgradeTest, ASchema9JournalKeepsItsChainWithHashesStoredAsBytes) {
  ExpectUpgradeKeepsTheChain("journal_v9_demo.sql",
                             "72:9f50aeee16b7e2f33c98c6916ea9691990f25378e6619e782a0226bf1694b1b4");
}

// The VACUUM that switches an upgraded journal to incremental vacuum copies
// the file through the WAL: on a volume without room for that twice over it
// is not tried, the journal opens and works as before (its chain intact),
// and the next start with room switches it.
TEST_F(CompactJournalTest, AnUpgradedJournalIsVacuumedOnlyWithRoomForTheCopy) {
  fk::testing::MakeJournalFromDump(path_, "journal_v8_demo.sql");
  const int64_t file = static_cast<int64_t>(std::filesystem::file_size(path_));
  OpenOptions short_of_space;
  short_of_space.volume_space = [&]() -> Result<VolumeSpace> {
    return VolumeSpace{2 * file - 1, 1 << 30};
  };
  auto j = fk::testing::OpenJournal(path_, &clock_, short_of_space);
  ASSERT_TRUE(j);
  EXPECT_EQ(j->schema_version(), LatestSchemaVersion());
  EXPECT_EQ(Count("PRAGMA auto_vacuum"), 0);
  Evaluate(*j, testing::StaleSnapshot("short-of-space"));
  j.reset();
  EXPECT_EQ(testing::StockShellVerify(path_).mismatches, 0);

  j = Open();
  ASSERT_TRUE(j);
  EXPECT_EQ(Count("PRAGMA auto_vacuum"), 2);
  EXPECT_EQ(Count("PRAGMA freelist_count"), 0);
  j.reset();
  EXPECT_EQ(testing::StockShellVerify(path_).mismatches, 0);
  EXPECT_TRUE(ReplayCheck().empty()) << ReplayCheck();
}

}  // namespace
}  // namespace fk::journal
