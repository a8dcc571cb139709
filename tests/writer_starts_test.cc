// writer_starts (schema 8): each start of `run` is recorded with the first
// seq it may append, so that every row names the writer that appended it.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <sstream>

#include "cli/commands.h"
#include "journal/chain.h"
#include "journal/journal.h"
#include "journal/migrations.h"
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
  ASSERT_TRUE(j->RecordWriterStart("w2").ok());  // appends nothing
  ASSERT_TRUE(j->RecordWriterStart("w3").ok());
  Healthy(*j, "sb-2");
  const auto starts = j->WriterStarts();
  ASSERT_TRUE(starts.ok()) << starts.status().ToString();
  EXPECT_EQ(*starts, (std::map<int64_t, std::string>{{1, "w1"}, {w1_last + 1, "w3"}}))
      << "w2 appended nothing: w3, started later at the same seq, wrote what follows";
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

}  // namespace
}  // namespace fk::journal
