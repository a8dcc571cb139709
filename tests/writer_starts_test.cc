// writer_starts (schema 8): each start of `run` is recorded with the first
// seq it may append, so that every row names the writer that appended it;
// since schema 11 with its enforcement, as a chained row of the journal that
// `journal verify` and the stock shell's verify_chain.sql check the table
// against.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <sstream>

#include "cli/commands.h"
#include "journal/chain.h"
#include "journal/journal.h"
#include "journal/migrations.h"
#include "journal/verify.h"
#include "journal_fixture.h"
#include "test_support.h"

namespace fk::journal {
namespace {
using namespace fk::domain;

class WriterStartsTest : public ::testing::Test {
 protected:
  std::unique_ptr<Journal> Open() { return fk::testing::OpenJournal(path_, &clock_); }
  void Healthy(Journal& j, const std::string& name) {
    Snapshot s = fk::testing::HealthySnapshot(name);
    ASSERT_TRUE(j.Record({s, decide(s), "1"}).ok());
  }
  fk::testing::TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  ManualTimeSource clock_;
};

TEST_F(WriterStartsTest, EachStartCoversTheSeqsAfterTheJournalsLastRow) {
  auto j = Open();
  EXPECT_GE(LatestSchemaVersion(), 8) << "writer_starts came with schema 8";
  ASSERT_TRUE(j->WriterStarts().ok());
  EXPECT_TRUE(j->WriterStarts()->empty()) << "opening records nothing; only run does";
  ASSERT_TRUE(j->RecordWriterStart("w1").ok());
  Healthy(*j, "sb-1");
  const int64_t w1_last = j->state().last_seq;
  ASSERT_GT(w1_last, 1);
  ASSERT_TRUE(j->RecordWriterStart("w2").ok());  // appends its start alone
  ASSERT_TRUE(j->RecordWriterStart("w3").ok());
  Healthy(*j, "sb-2");
  const auto starts = j->WriterStarts();
  ASSERT_TRUE(starts.ok()) << starts.status().ToString();
  EXPECT_EQ(*starts,
            (std::map<int64_t, std::string>{{1, "w1"}, {w1_last + 1, "w2"}, {w1_last + 2, "w3"}}))
      << "each start is the first row its writer appends (schema 11)";
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM writer_starts").getInt(), 3)
      << "every start is kept";
}

// Schema 11: each start records where enforcement was off, so an auditor
// knows from the journal why a stale sandbox kept running.
TEST_F(WriterStartsTest, EachStartRecordsItsEnforcement) {
  auto j = Open();
  ASSERT_TRUE(j->RecordWriterStart("w1").ok());
  domain::Enforcement some;
  some.dry_run_namespaces = {"team-b", "team-a"};
  ASSERT_TRUE(j->RecordWriterStart("w2", some).ok());
  domain::Enforcement all;
  all.dry_run_everywhere = true;
  ASSERT_TRUE(j->RecordWriterStart("w3", all).ok());
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  SQLite::Statement q(db,
                      "SELECT writer || ' ' || enforcement || ' ' || dry_run_namespaces "
                      "FROM writer_starts ORDER BY start");
  std::vector<std::string> rows;
  while (q.executeStep()) rows.push_back(q.getColumn(0).getString());
  EXPECT_EQ(rows, (std::vector<std::string>{"w1 enforce []", "w2 enforce [\"team-a\",\"team-b\"]",
                                            "w3 dry-run []"}));
  SQLite::Database rw(path_, SQLite::OPEN_READWRITE);
  EXPECT_THROW(rw.exec("INSERT INTO writer_starts (first_seq, writer, started_at, enforcement) "
                       "VALUES (1, 'x', 'now', 'audit')"),
               SQLite::Exception);
}

TEST_F(WriterStartsTest, StartsAreAppendOnly) {
  ASSERT_TRUE(Open()->RecordWriterStart("w1").ok());
  SQLite::Database db(path_, SQLite::OPEN_READWRITE);
  EXPECT_THROW(db.exec("DELETE FROM writer_starts"), SQLite::Exception);
  EXPECT_THROW(db.exec("UPDATE writer_starts SET writer = 'x'"), SQLite::Exception);
  EXPECT_EQ(db.execAndGet("SELECT writer FROM writer_starts").getString(), "w1");
}

// The schema-7 journal the last landed build wrote (the demo, three suspends)
// opens and upgrades with no start recorded (its rows' writers stay what its
// intents say), keeps every row and its chain; the next start covers what
// follows and the chain still verifies.
TEST_F(WriterStartsTest, ASchema7JournalUpgradesKeepsItsRowsAndItsChain) {
  fk::testing::MakeJournalFromDump(path_, "journal_v7_demo.sql");
  const std::string rows_sql = "SELECT seq, at, kind, subject, body, " + chain::HexSql("hash") +
                               " FROM journal ORDER BY seq";
  const auto rows = fk::testing::Rows(path_, rows_sql);
  const auto transitions = fk::testing::Rows(path_, "SELECT * FROM transitions ORDER BY seq");
  ASSERT_EQ(transitions.size(), 3u);
  {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    ASSERT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 7);
  }
  auto j = Open();
  ASSERT_TRUE(j);
  EXPECT_EQ(j->schema_version(), LatestSchemaVersion());
  EXPECT_EQ(fk::testing::Rows(path_, rows_sql), rows);
  EXPECT_EQ(fk::testing::Rows(path_, "SELECT * FROM transitions ORDER BY seq"), transitions);
  ASSERT_TRUE(j->WriterStarts().ok());
  EXPECT_TRUE(j->WriterStarts()->empty()) << "upgrading records no start";
  const int64_t old_last = j->state().last_seq;
  ASSERT_TRUE(j->RecordWriterStart("w-new").ok());
  Healthy(*j, "after-upgrade");
  EXPECT_EQ(*j->WriterStarts(), (std::map<int64_t, std::string>{{old_last + 1, "w-new"}}));
  j.reset();
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunJournalVerify({path_, std::nullopt, std::nullopt}, out, err), cli::kExitOk)
      << out.str() << err.str();
}

// ---- run starts in the hash chain (schema 11) ---------------------------------

class ChainedStartsTest : public WriterStartsTest {
 protected:
  // w1 enforcing, w2 with enforcement off in team-a, each appending a row.
  void WriteStarts() {
    auto j = Open();
    ASSERT_TRUE(j->RecordWriterStart("w1").ok());
    Healthy(*j, "sb-1");
    clock_.Advance(std::chrono::seconds(1));
    domain::Enforcement some;
    some.dry_run_namespaces = {"team-a"};
    ASSERT_TRUE(j->RecordWriterStart("w2", some).ok());
    Healthy(*j, "sb-2");
  }
  std::pair<int, std::string> Verify() {
    std::ostringstream out, err;
    const int rc = cli::RunJournalVerify({path_, std::nullopt, std::nullopt}, out, err);
    return {rc, out.str() + err.str()};
  }
  // What whoever can write the volume can do: the triggers dropped first.
  void Tamper(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec(
        "DROP TRIGGER writer_starts_append_only_update;"
        "DROP TRIGGER writer_starts_append_only_delete;");
    db.exec(sql);
  }
};

TEST_F(ChainedStartsTest, EachStartIsAChainedRowThatBothVerifiersCheck) {
  WriteStarts();
  const auto rows = fk::testing::Rows(
      path_,
      "SELECT w.writer, j.kind, j.body, j.hash IS NOT NULL, w.chained, "
      "w.started_at = (SELECT recorded_at FROM journal_rows WHERE seq = w.first_seq) "
      "FROM writer_starts AS w JOIN journal AS j ON j.seq = w.first_seq ORDER BY w.start");
  EXPECT_EQ(rows, (std::vector<std::string>{R"(w1|11|["w1","enforce",[]]|1|1|1)",
                                            R"(w2|11|["w2","enforce",["team-a"]]|1|1|1)"}));
  const auto events = fk::testing::Rows(
      path_, "SELECT payload FROM events WHERE kind = 'writer_started' ORDER BY seq");
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1],
            R"({"writer":"w2","enforcement":"enforce","dry_run_namespaces":["team-a"]})");
  const auto [rc, out] = Verify();
  EXPECT_EQ(rc, cli::kExitOk) << out;
  EXPECT_NE(out.find("run starts: 2, 2 chained and matching their rows\n"), std::string::npos)
      << out;
  const auto shell = fk::testing::StockShellVerify(path_);
  EXPECT_EQ(shell.mismatches, 0) << shell.out;
}

struct StartTampering {
  std::string what;
  std::string sql;
};
void PrintTo(const StartTampering& t, std::ostream* os) { *os << t.what; }

class StartTamperTest : public ChainedStartsTest,
                        public ::testing::WithParamInterface<StartTampering> {};

// Each edit of the table is seen by both verifiers, though the chain of rows
// is intact: the table is checked against the chained rows.
TEST_P(StartTamperTest, BothVerifiersSeeIt) {
  WriteStarts();
  Tamper(GetParam().sql);
  const auto [rc, out] = Verify();
  EXPECT_EQ(rc, cli::kExitCheckFailed) << GetParam().what << ": " << out;
  EXPECT_NE(out.find("writer start"), std::string::npos) << out;
  const auto shell = fk::testing::StockShellVerify(path_);
  EXPECT_GT(shell.mismatches, 0) << GetParam().what << ": " << shell.out;
}

INSTANTIATE_TEST_SUITE_P(
    EveryKind, StartTamperTest,
    ::testing::Values(
        StartTampering{"enforcement rewritten to hide a dry run",
                       "UPDATE writer_starts SET dry_run_namespaces = '[]' WHERE writer = 'w2'"},
        StartTampering{"a dry run everywhere claimed",
                       "UPDATE writer_starts SET enforcement = 'dry-run' WHERE writer = 'w1'"},
        StartTampering{"the writer renamed",
                       "UPDATE writer_starts SET writer = 'w9' WHERE writer = 'w2'"},
        StartTampering{"the start time moved",
                       "UPDATE writer_starts SET started_at = '2020-01-01T00:00:00.000Z' "
                       "WHERE writer = 'w2'"},
        StartTampering{"a start deleted", "DELETE FROM writer_starts WHERE writer = 'w2'"},
        StartTampering{"a start unmarked as chained",
                       "UPDATE writer_starts SET chained = 0 WHERE writer = 'w2'"},
        StartTampering{"a start inserted without its row",
                       "INSERT INTO writer_starts (first_seq, writer, started_at) "
                       "SELECT max(seq) + 1, 'w9', '2030-01-01T00:00:00.000Z' FROM journal"},
        StartTampering{"an unchained start inserted first, taking over w1's later rows",
                       "INSERT INTO writer_starts (start, first_seq, writer, started_at) "
                       "SELECT 0, min(first_seq) + 1, 'w9', '2030-01-01T00:00:00.000Z' "
                       "FROM writer_starts"},
        StartTampering{"a second chained start on w2's row, saying dry-run",
                       "INSERT INTO writer_starts (first_seq, writer, started_at, enforcement, "
                       "chained) SELECT first_seq, 'w9', started_at, 'dry-run', 1 "
                       "FROM writer_starts WHERE writer = 'w2'"},
        StartTampering{"a chained start inserted without its row",
                       "INSERT INTO writer_starts (first_seq, writer, started_at, chained) "
                       "SELECT max(seq) + 1, 'w9', '2030-01-01T00:00:00.000Z', 1 FROM journal"}));

// Dropping the table, or rebuilding it without `chained`, does not turn the
// check off: the writer_started rows need their starts.
TEST_F(ChainedStartsTest, ATableRebuiltWithoutItsColumnIsAMismatch) {
  WriteStarts();
  Tamper(
      "CREATE TABLE old_starts AS SELECT start, first_seq, writer, started_at FROM writer_starts;"
      "DROP TABLE writer_starts; ALTER TABLE old_starts RENAME TO writer_starts;");
  const auto [rc, out] = Verify();
  EXPECT_EQ(rc, cli::kExitCheckFailed) << out;
  EXPECT_NE(out.find("no table writer_starts with column chained"), std::string::npos) << out;
  EXPECT_GT(fk::testing::StockShellVerify(path_).mismatches, 0);
}

// The schema-9 journal the last released build wrote (the demo) upgrades with
// its starts unchained (the chain cannot vouch for them, and both verifiers
// say so or accept them); the next start is chained and checked.
TEST_F(ChainedStartsTest, ASchema9JournalKeepsItsStartsAndChainsTheNext) {
  fk::testing::MakeJournalFromDump(path_, "journal_v9_demo.sql");
  {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    ASSERT_EQ(db.execAndGet("PRAGMA user_version").getInt(), 9);
    db.exec(  // as `run` of schema 9 recorded its start: before the demo's rows
        "INSERT INTO writer_starts (first_seq, writer, started_at) "
        "VALUES (1, 'w-released', '2026-12-01T10:00:00.000Z')");
    // The released build verifies it (no start is chained there).
    ASSERT_EQ(fk::testing::StockShellVerify(path_).mismatches, 0);
  }
  const auto old_starts = fk::testing::Rows(
      path_, "SELECT start, first_seq, writer, started_at FROM writer_starts ORDER BY start");
  ASSERT_FALSE(old_starts.empty());
  // The contract views answer after the upgrade as before it (the events'
  // identities; a sandbox_observed payload gains the dry-run fields).
  const std::vector<std::string> views = {
      "SELECT * FROM transitions ORDER BY seq",
      "SELECT seq, recorded_at, kind, namespace, name, uid, ref_seq FROM events ORDER BY seq",
      "SELECT * FROM fence_bypasses ORDER BY 1, 2, 3",
      "SELECT namespace, sandbox, sandbox_uid, verdict, reason FROM sandbox_state ORDER BY 1, 2"};
  std::vector<std::vector<std::string>> before;
  for (const std::string& v : views) before.push_back(fk::testing::Rows(path_, v));
  ASSERT_FALSE(before[0].empty());
  {
    auto j = Open();
    ASSERT_TRUE(j);
    for (size_t i = 0; i < views.size(); ++i)
      EXPECT_EQ(fk::testing::Rows(path_, views[i]), before[i]) << views[i];
    ASSERT_TRUE(j->RecordWriterStart("w-new").ok());
    Healthy(*j, "after-upgrade");
  }
  const auto starts = fk::testing::Rows(
      path_, "SELECT start, first_seq, writer, started_at FROM writer_starts ORDER BY start");
  ASSERT_EQ(starts.size(), old_starts.size() + 1);
  EXPECT_TRUE(std::equal(old_starts.begin(), old_starts.end(), starts.begin()));
  EXPECT_EQ(fk::testing::Rows(path_, "SELECT count(*) FROM writer_starts WHERE chained = 0"),
            (std::vector<std::string>{std::to_string(old_starts.size())}));
  const auto [rc, out] = Verify();
  EXPECT_EQ(rc, cli::kExitOk) << out;
  EXPECT_NE(out.find("run starts: " + std::to_string(starts.size()) +
                     ", 1 chained and matching their rows (" + std::to_string(old_starts.size()) +
                     " recorded before schema 11, which the chain cannot vouch for)"),
            std::string::npos)
      << out;
  EXPECT_EQ(fk::testing::StockShellVerify(path_).mismatches, 0);
}

// verify_chain.sql holds the very query `journal verify` runs.
TEST(ChainedStarts, TheStockShellScriptRunsTheSameQuery) {
  const std::string script =
      fk::testing::ReadBytes(std::string(FK_SOURCE_DIR) + "/schema/audit/verify_chain.sql");
  std::string query = StartMismatchesSql();
  query = query.substr(query.find_first_not_of('\n'));
  query = query.substr(0, query.find_last_not_of('\n') + 1);
  EXPECT_NE(script.find(query + ";\n"), std::string::npos) << "copy the query into the script";
}

}  // namespace
}  // namespace fk::journal
