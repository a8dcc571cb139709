// The SQLite journal: durability settings, restart recovery, idle no-growth,
// append-only enforcement, refusal of foreign and newer files, the contract
// views, pending intents, and failure atomicity.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <sstream>

#include "cli/commands.h"
#include "journal/journal.h"
#include "journal/migrations.h"
#include "test_support.h"

namespace fk::journal {
namespace {
using namespace fk::domain;
using fk::testing::TempDir;

class JournalTest : public ::testing::Test {
 protected:
  JournalTest() : clock_(std::chrono::system_clock::from_time_t(1'800'000'000)) {}

  std::unique_ptr<Journal> OpenJournal(OpenOptions o = {}) {
    o.clock = &clock_;
    auto j = Journal::Open(path_, o);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    return j.ok() ? std::move(*j) : nullptr;
  }

  // Observe, decide and record one snapshot the way the reconciler does,
  // with the history taken from the journal.
  Journal::Recorded Evaluate(Journal& j, Snapshot s, const std::string& rv = "100") {
    s.history = history_for(j.state(), s.sandbox.uid);
    Evaluation e{s, decide(s), rv};
    auto r = j.Record(e);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    clock_.Advance(std::chrono::seconds(1));
    return r.ok() ? *r : Journal::Recorded{};
  }

  // Runs `replay --check` on the journal; returns its error output ("" when
  // it passes) and keeps its timeline in replay_out_.
  std::string ReplayCheck() {
    std::ostringstream out, err;
    cli::ReplayOptions o;
    o.journal = path_;
    o.check = true;
    const int code = cli::RunReplay(o, out, err);
    replay_out_ = out.str();
    EXPECT_EQ(code == cli::kExitOk, err.str().empty()) << err.str();
    return err.str();
  }

  int64_t CountRows(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }

  TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  std::string replay_out_;
  ManualTimeSource clock_;
};

TEST_F(JournalTest, CreatesFileWithMode0600WalAndIdentity) {
  auto j = OpenJournal();
  ASSERT_TRUE(j);
  struct stat st {};
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  EXPECT_EQ(j->schema_version(), LatestSchemaVersion());
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("PRAGMA application_id").getInt(), kApplicationId);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), LatestSchemaVersion());
  EXPECT_EQ(db.execAndGet("PRAGMA journal_mode").getString(), "wal");
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM schema_migrations").getInt(),
            static_cast<int>(EmbeddedMigrations().size()));
}

TEST_F(JournalTest, AdoptsAnEmptyFile) {
  testing::WriteBytes(path_, "");
  auto j = OpenJournal();
  ASSERT_TRUE(j);
  EXPECT_EQ(j->schema_version(), LatestSchemaVersion());
}

TEST_F(JournalTest, RestartRecoversTheSameState) {
  {
    auto j = OpenJournal();
    Evaluate(*j, testing::HealthySnapshot("a"));
    Evaluate(*j, testing::HealthySnapshot("b"));
    auto stale = Evaluate(*j, testing::StaleSnapshot("a"));
    ASSERT_TRUE(stale.intent_seq);
    ASSERT_TRUE(j->RecordOutcome(*stale.intent_seq, {Outcome::kApplied, 3, ""}).ok());
    auto pending = Evaluate(*j, testing::StaleSnapshot("b"));
    ASSERT_TRUE(pending.intent_seq);
  }
  JournalState before;
  {
    auto j = OpenJournal();
    before = j->state();
  }
  auto j = OpenJournal();
  EXPECT_TRUE(j->state() == before);
  // And the loaded projection equals folding every event from the start.
  JournalState folded;
  ASSERT_TRUE(j->ForEachEvent(1, INT64_MAX, [&](const Event& e) {
                 fold(folded, e);
                 return Status::Ok();
               }).ok());
  EXPECT_TRUE(folded == j->state());
  EXPECT_EQ(j->state().sandboxes.at("uid-agents-a").history.applied_generation, 3);
  EXPECT_EQ(j->state().pending_intents.size(), 1u);
}

TEST_F(JournalTest, IdleEvaluationsAppendNothing) {
  auto j = OpenJournal();
  const Snapshot healthy = testing::HealthySnapshot("a");
  const Snapshot held = [] {
    Snapshot s = testing::HealthySnapshot("b", "other-namespace");  // its own fence
    s.workload_fence.generation = 2;
    s.sandbox.should_run = false;
    return s;
  }();
  Evaluate(*j, healthy);
  Evaluate(*j, held);
  const int64_t rows = CountRows("SELECT count(*) FROM events");
  EXPECT_GT(rows, 0);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(Evaluate(*j, healthy).appended, 0u);
    EXPECT_EQ(Evaluate(*j, held).appended, 0u);
  }
  EXPECT_EQ(CountRows("SELECT count(*) FROM events"), rows);
}

// A sandbox that OpenShell is admitting at kStartMs: its fence rolled to
// generation 2 and its workload pod is gated.
Snapshot AdmittingSince(int64_t start_ms, const std::string& name) {
  Snapshot s = testing::HealthySnapshot(name, "ns-b");  // its own namespace and fence
  s.workload_fence.generation = 2;
  s.sandbox.bootstrapping = true;
  s.sandbox.bootstrap_op = BootstrapOp::kRestart;
  s.sandbox.bootstrap_phase = "preparing";
  s.sandbox.bootstrap_started_at_ms = start_ms;
  s.workload_pod.scheduling_gated = true;
  s.observed_at_ms = start_ms;
  return s;
}

// The observation time is recorded with an observation but is no change by
// itself: while the clock moves, an idle cluster appends nothing, and neither
// does an admitting sandbox (whose note says how long ago it started). When
// its grace ends, the same objects get a new decision, which is recorded with
// the observation at its new time, and replay --check re-decides both at
// their recorded times.
TEST_F(JournalTest, TimePassingAppendsNothingUntilItChangesADecision) {
  constexpr int64_t kStartMs = 1'800'000'000'000;
  auto j = OpenJournal();
  Snapshot healthy = testing::HealthySnapshot("a");
  healthy.observed_at_ms = kStartMs;
  Snapshot stale = AdmittingSince(kStartMs, "b");     // suspended once the grace ends
  Snapshot admitted = AdmittingSince(kStartMs, "c");  // healthy once the grace ends
  admitted.sandbox.fence_generation = 2;              // OpenShell already wrote the annotations
  Evaluate(*j, healthy);
  // Its namespace's two policies, its observation and decision, and no intent.
  EXPECT_EQ(Evaluate(*j, stale).appended, 4u);
  EXPECT_EQ(Evaluate(*j, admitted).appended, 2u);
  const int64_t rows = CountRows("SELECT count(*) FROM events");
  for (int64_t t = kStartMs + 1000; t < kStartMs + kBootstrapGraceMs; t += 7000) {
    healthy.observed_at_ms = stale.observed_at_ms = admitted.observed_at_ms = t;
    EXPECT_EQ(Evaluate(*j, healthy).appended, 0u) << t;
    EXPECT_EQ(Evaluate(*j, stale).appended, 0u) << t;
    EXPECT_EQ(Evaluate(*j, admitted).appended, 0u) << t;
  }
  EXPECT_EQ(CountRows("SELECT count(*) FROM events"), rows);
  const SandboxRecord& b = j->state().sandboxes.at(stale.sandbox.uid);
  EXPECT_EQ(b.observation->observed_at_ms, kStartMs);  // the time it was recorded at
  EXPECT_EQ(b.decision->verdict, Verdict::kAdmitting);

  const int64_t ended_ms = kStartMs + kBootstrapGraceMs;
  stale.observed_at_ms = admitted.observed_at_ms = ended_ms;
  const auto suspended = Evaluate(*j, stale);
  EXPECT_EQ(suspended.appended, 3u);  // observation, decision, intent
  EXPECT_TRUE(suspended.intent_seq);
  EXPECT_EQ(Evaluate(*j, admitted).appended, 2u);  // observation, decision: no action, still news
  for (const Snapshot* s : {&stale, &admitted}) {
    const SandboxRecord& r = j->state().sandboxes.at(s->sandbox.uid);
    EXPECT_EQ(r.observation->observed_at_ms, ended_ms);
    EXPECT_EQ(r.decision->verdict, s == &stale ? Verdict::kSuspend : Verdict::kHealthy);
  }

  j.reset();
  ASSERT_TRUE(ReplayCheck().empty());
  EXPECT_NE(replay_out_.find("ns-b/b  admitting: OpenShell is admitting the sandbox (restart"),
            std::string::npos)
      << replay_out_;
  // The end of the grace is part of what was decided: replay --check notices
  // a recorded one that decide() would not give.
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec("DROP TRIGGER events_append_only_update");
    db.exec(
        "UPDATE events SET payload = json_set(payload, '$.reevaluate_at_ms', 1) "
        "WHERE kind = 'decided' AND json_extract(payload, '$.verdict') = 'admitting'");
  }
  EXPECT_NE(ReplayCheck().find("recorded decision admitting/none until 1"), std::string::npos);
}

TEST_F(JournalTest, SuspendIsIntendedOnceThenSuppressed) {
  auto j = OpenJournal();
  Evaluate(*j, testing::HealthySnapshot("a"));
  auto first = Evaluate(*j, testing::StaleSnapshot("a"));
  ASSERT_TRUE(first.intent_seq);
  // Same stale read again while the intent is pending: no second intent.
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(Evaluate(*j, testing::StaleSnapshot("a")).intent_seq);
  ASSERT_TRUE(j->RecordOutcome(*first.intent_seq, {Outcome::kApplied, 3, ""}).ok());
  // A lagging cache still shows generation 2, Running: nothing.
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(Evaluate(*j, testing::StaleSnapshot("a")).intent_seq);
  EXPECT_EQ(CountRows("SELECT count(*) FROM transitions"), 1);
}

TEST_F(JournalTest, ConflictOutcomeAllowsANewAttempt) {
  auto j = OpenJournal();
  auto first = Evaluate(*j, testing::StaleSnapshot("a"));
  ASSERT_TRUE(first.intent_seq);
  ASSERT_TRUE(j->RecordOutcome(*first.intent_seq, {Outcome::kConflict, std::nullopt, "409"}).ok());
  auto second = Evaluate(*j, testing::StaleSnapshot("a"), "101");
  ASSERT_TRUE(second.intent_seq);
  EXPECT_GT(*second.intent_seq, *first.intent_seq);
}

TEST_F(JournalTest, EventsAreAppendOnly) {
  {
    auto j = OpenJournal();
    Evaluate(*j, testing::HealthySnapshot("a"));
  }
  SQLite::Database db(path_, SQLite::OPEN_READWRITE);
  try {
    db.exec("UPDATE events SET payload = '{}' WHERE seq = 1");
    FAIL() << "UPDATE was allowed";
  } catch (const SQLite::Exception& e) {
    EXPECT_NE(std::string(e.what()).find("append-only"), std::string::npos) << e.what();
  }
  try {
    db.exec("DELETE FROM events");
    FAIL() << "DELETE was allowed";
  } catch (const SQLite::Exception& e) {
    EXPECT_NE(std::string(e.what()).find("append-only"), std::string::npos) << e.what();
  }
  EXPECT_GT(db.execAndGet("SELECT count(*) FROM events").getInt(), 0);
}

// Refusals: each leaves the file byte-identical and names it.
void ExpectRefusedUntouched(const std::string& path, const std::string& what) {
  const std::string before = testing::ReadBytes(path);
  auto j = Journal::Open(path);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), Code::kRefused) << j.status().ToString();
  EXPECT_NE(j.status().message().find(path), std::string::npos) << j.status().message();
  EXPECT_NE(j.status().message().find(what), std::string::npos) << j.status().message();
  EXPECT_EQ(testing::ReadBytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(path + "-wal"));
}

TEST_F(JournalTest, RefusesATextFile) {
  testing::WriteBytes(path_, "this is somebody's notes file\n");
  ExpectRefusedUntouched(path_, "not an SQLite database");
}

TEST_F(JournalTest, RefusesAForeignSqliteDatabase) {
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1); PRAGMA application_id = 1234");
  }
  ExpectRefusedUntouched(path_, "another application");
}

TEST_F(JournalTest, RefusesANonEmptyDatabaseWithApplicationIdZero) {
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    db.exec("CREATE TABLE t (x INTEGER)");
  }
  ExpectRefusedUntouched(path_, "application_id 0x00000000");
}

TEST_F(JournalTest, RefusesANewerSchema) {
  { OpenJournal(); }
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec("PRAGMA user_version = 99");
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
  }
  std::filesystem::remove(path_ + "-wal");
  std::filesystem::remove(path_ + "-shm");
  ExpectRefusedUntouched(path_, "schema version 99, newer than this fencekeeper knows");
}

TEST_F(JournalTest, RefusesAnUnusableLocation) {
  auto missing_dir = Journal::Open(dir_.File("no/such/dir/journal.db"));
  ASSERT_FALSE(missing_dir.ok());
  EXPECT_NE(missing_dir.status().message().find("does not exist"), std::string::npos);
  std::filesystem::create_directory(dir_.File("a-directory"));
  auto directory = Journal::Open(dir_.File("a-directory"));
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.status().message().find("not a regular file"), std::string::npos);
}

TEST_F(JournalTest, ReadOnlyOpenOfAMissingFileCreatesNothing) {
  OpenOptions o;
  o.read_only = true;
  auto j = Journal::Open(path_, o);
  ASSERT_FALSE(j.ok());
  EXPECT_EQ(j.status().code(), Code::kNotFound);
  EXPECT_FALSE(std::filesystem::exists(path_));
}

TEST_F(JournalTest, ContractViewsShowAScriptedHistory) {
  auto j = OpenJournal();
  Evaluate(*j, testing::HealthySnapshot("a"));  // fence gen 1 seen for both policies
  Evaluate(*j, testing::HealthySnapshot("b"));
  Evaluate(*j, testing::HealthySnapshot("c"));
  auto a = Evaluate(*j, testing::StaleSnapshot("a"));  // fence gen 2 seen once
  ASSERT_TRUE(j->RecordOutcome(*a.intent_seq, {Outcome::kApplied, 3, ""}).ok());
  auto b = Evaluate(*j, testing::StaleSnapshot("b"));
  ASSERT_TRUE(
      j->RecordOutcome(*b.intent_seq, {Outcome::kConflict, std::nullopt, "409 Conflict"}).ok());
  auto c = Evaluate(*j, testing::StaleSnapshot("c"));  // left pending

  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  SQLite::Statement t(
      db,
      "SELECT seq, namespace, sandbox, sandbox_uid, action, reason, outcome, detail, "
      "recorded_at FROM transitions ORDER BY seq");
  struct Row {
    int64_t seq;
    std::string sandbox, outcome, detail;
  };
  std::vector<Row> rows;
  while (t.executeStep()) {
    EXPECT_EQ(t.getColumn(1).getString(), "agents");
    EXPECT_EQ(t.getColumn(3).getString(), "uid-agents-" + t.getColumn(2).getString());
    EXPECT_EQ(t.getColumn(4).getString(), "suspend");
    EXPECT_EQ(t.getColumn(5).getString(), "fence-stale");
    EXPECT_EQ(t.getColumn(8).getString().back(), 'Z');
    rows.push_back({t.getColumn(0).getInt64(), t.getColumn(2).getString(),
                    t.getColumn(6).getString(), t.getColumn(7).getString()});
  }
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].seq, *a.intent_seq);
  EXPECT_EQ(rows[0].outcome, "applied");
  EXPECT_EQ(rows[1].seq, *b.intent_seq);
  EXPECT_EQ(rows[1].outcome, "conflict");
  EXPECT_EQ(rows[1].detail, "409 Conflict");
  EXPECT_EQ(rows[2].seq, *c.intent_seq);
  EXPECT_EQ(rows[2].outcome, "pending");
  EXPECT_EQ(rows[2].detail, "fence generation 1 -> 2");

  SQLite::Statement f(
      db,
      "SELECT namespace, policy, policy_uid, generation, intact FROM fence_observations "
      "ORDER BY seq");
  std::vector<std::string> fences;
  while (f.executeStep()) {
    fences.push_back(f.getColumn(1).getString() + "@" + f.getColumn(2).getString() + "/" +
                     f.getColumn(3).getString() + "/" + f.getColumn(4).getString());
  }
  EXPECT_EQ(fences, (std::vector<std::string>{"openshell-sandbox-workloads@fence-uid/1/1",
                                              "openshell-sandbox-supervisors@sup-fence-uid/1/1",
                                              "openshell-sandbox-workloads@fence-uid/2/1"}));

  SQLite::Statement s(db,
                      "SELECT sandbox, verdict, pending_intent_seq, applied_generation "
                      "FROM sandbox_state ORDER BY sandbox");
  std::vector<std::string> states;
  while (s.executeStep()) {
    states.push_back(s.getColumn(0).getString() + ":" + s.getColumn(1).getString() + ":" +
                     (s.getColumn(2).isNull() ? "-" : s.getColumn(2).getString()) + ":" +
                     (s.getColumn(3).isNull() ? "-" : s.getColumn(3).getString()));
  }
  EXPECT_EQ(states,
            (std::vector<std::string>{"a:suspend:-:3", "b:suspend:-:-",
                                      "c:suspend:" + std::to_string(*c.intent_seq) + ":-"}));
}

TEST_F(JournalTest, IntentWithoutOutcomeIsPendingAfterReopen) {
  int64_t intent = 0;
  {
    auto j = OpenJournal();
    auto r = Evaluate(*j, testing::StaleSnapshot("a"));
    ASSERT_TRUE(r.intent_seq);
    intent = *r.intent_seq;
  }  // "crash" between intent and PATCH outcome
  auto j = OpenJournal();
  ASSERT_EQ(j->state().pending_intents.size(), 1u);
  const IntentRecord& rec = j->state().pending_intents.at(intent);
  EXPECT_EQ(rec.name, "a");
  EXPECT_EQ(rec.intent.resource_version, "100");
  EXPECT_EQ(rec.intent.reason, Reason::kFenceStale);
  EXPECT_EQ(CountRows("SELECT count(*) FROM transitions WHERE outcome = 'pending'"), 1);
  // The restarted reconciler does not PATCH again while it is pending.
  EXPECT_FALSE(Evaluate(*j, testing::StaleSnapshot("a")).intent_seq);
  // Resolving it clears the pending state.
  ASSERT_TRUE(j->RecordOutcome(intent, {Outcome::kApplied, 3, "confirmed after restart"}).ok());
  EXPECT_TRUE(j->state().pending_intents.empty());
  EXPECT_FALSE(j->RecordOutcome(intent, {Outcome::kApplied, 3, ""}).ok());  // not pending any more
}

TEST_F(JournalTest, FullDiskFailsTheAppendAndChangesNothing) {
  OpenOptions o;
  auto j = OpenJournal(o);
  ASSERT_TRUE(j);
  const int64_t pages =
      SQLite::Database(path_, SQLite::OPEN_READONLY).execAndGet("PRAGMA page_count").getInt64();
  j.reset();
  o.max_page_count = pages + 1;
  j = OpenJournal(o);
  Status failure;
  int appended = 0;
  for (int i = 0; i < 500 && failure.ok(); ++i) {
    Snapshot s = testing::HealthySnapshot("sandbox-with-a-long-name-" + std::to_string(i));
    s.history = history_for(j->state(), s.sandbox.uid);
    const JournalState before = j->state();
    auto r = j->Record({s, decide(s), "1"});
    if (r.ok()) {
      ++appended;
      continue;
    }
    failure = r.status();
    EXPECT_TRUE(j->state() == before);  // nothing folded for the failed append
  }
  ASSERT_FALSE(failure.ok()) << "the page cap never filled";
  EXPECT_EQ(failure.code(), Code::kIOError);
  EXPECT_NE(failure.message().find("disk full"), std::string::npos) << failure.message();
  EXPECT_EQ(CountRows("SELECT count(*) FROM sandbox_state"), appended);
  // The journal is still consistent and usable for reading.
  auto ic = j->IntegrityCheck();
  ASSERT_TRUE(ic.ok());
  EXPECT_EQ(*ic, "ok");
}

TEST_F(JournalTest, DetectsASecondWriter) {
  auto a = OpenJournal();
  auto b = OpenJournal();
  Evaluate(*a, testing::HealthySnapshot("a"));
  Snapshot s = testing::HealthySnapshot("b");
  auto r = b->Record({s, decide(s), "1"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kBusy);
  EXPECT_NE(r.status().message().find("another process"), std::string::npos);
}

TEST(Migrations, UpgradeAnOlderJournalAndRollBackAFailedOne) {
  TempDir dir;
  const std::string path = dir.File("j.db");
  ManualTimeSource clock(std::chrono::system_clock::from_time_t(0));
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  const std::vector<Migration> v1 = {EmbeddedMigrations().front()};
  ASSERT_TRUE(ApplyMigrations(db, v1, clock).ok());
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 1);

  std::vector<Migration> v2 = v1;
  v2.push_back({2, "0002_test_column", "ALTER TABLE sandbox_projection ADD COLUMN note TEXT;"});
  ASSERT_TRUE(ApplyMigrations(db, v2, clock).ok());
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM schema_migrations").getInt(), 2);

  std::vector<Migration> v3 = v2;
  v3.push_back({3, "0003_broken", "CREATE TABLE ok_table (x INTEGER); THIS IS NOT SQL;"});
  Status s = ApplyMigrations(db, v3, clock);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("0003_broken"), std::string::npos);
  EXPECT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 2);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM sqlite_schema WHERE name = 'ok_table'").getInt(),
            0);
}

}  // namespace
}  // namespace fk::journal
