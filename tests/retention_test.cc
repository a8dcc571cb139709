// Retention and the archive (docs/retention.md): the oldest rows go in
// steps, each recorded by a chained `pruned` row and folded into the base
// state; what is kept still folds to the projections, still verifies, and
// still chains; an archive file holds each pruned range, sealed, and an
// archive that cannot be written removes nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <sstream>

#include "cli/commands.h"
#include "domain/fold.h"
#include "journal/archive.h"
#include "journal/journal.h"
#include "journal/verify.h"
#include "journal_fixture.h"
#include "reconciler/retention.h"
#include "test_support.h"

namespace fk::journal {
namespace {
using namespace fk::domain;
using fk::testing::TempDir;
namespace fs = std::filesystem;
using cli::kExitCheckFailed;
using cli::kExitOk;

int64_t ShellLastLine(const std::string& command) {
  auto r = fk::testing::RunShell(command + " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const size_t end = r.out.find_last_not_of('\n');
  const size_t start = r.out.find_last_of('\n', end);
  return std::stoll(r.out.substr(start == std::string::npos ? 0 : start + 1, end - start));
}

class RetentionTest : public ::testing::Test {
 protected:
  RetentionTest() : clock_(std::chrono::system_clock::from_time_t(1'800'000'000)) {}

  std::unique_ptr<Journal> Open() { return fk::testing::OpenJournal(path_, &clock_); }
  // One sandbox's life: created healthy, suspended by a fence roll, deleted.
  void Lifecycle(Journal& j, int i, bool forget = true) {
    Snapshot s = fk::testing::HealthySnapshot("sb-" + std::to_string(i));
    s.sandbox.uid = "uid-" + std::to_string(i);
    s.history = history_for(j.state(), s.sandbox.uid);
    ASSERT_TRUE(j.Record(Evaluation{s, decide(s), "1"}).ok());
    s.workload_fence.generation = 2 + i;
    s.history = history_for(j.state(), s.sandbox.uid);
    auto r = j.Record(Evaluation{s, decide(s), "2"});
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->intent_seq);
    ASSERT_TRUE(j.RecordOutcome(*r->intent_seq, {Outcome::kApplied, 3, ""}).ok());
    if (forget) {
      ASSERT_TRUE(j.Forget(s.sandbox.uid, "deleted").ok());
    }
  }
  void Lifecycles(Journal& j, int from, int count, bool forget = true) {
    for (int i = from; i < from + count; ++i) {
      Lifecycle(j, i, forget);
      clock_.Advance(std::chrono::seconds(1));
    }
  }
  PruneOptions Due(std::string archive = "") const {
    PruneOptions o;
    o.cutoff_ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now().time_since_epoch())
            .count();
    o.archive_dir = std::move(archive);
    return o;
  }
  // fold(base, retained events) — what replay and verify start from.
  JournalState Refolded(const Journal& j) {
    auto base = j.BaseState();
    EXPECT_TRUE(base.ok()) << base.status().ToString();
    JournalState s = *base;
    EXPECT_TRUE(j.ForEachEvent(s.last_seq + 1, j.state().last_seq, [&](const Event& e) {
                   fold(s, e);
                   return Status::Ok();
                 }).ok());
    return s;
  }
  int64_t Count(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }
  int Verify(std::optional<std::string> archive = std::nullopt,
             std::optional<std::string> head = std::nullopt, std::string* err_text = nullptr) {
    std::ostringstream out, err;
    cli::VerifyOptions o{path_, std::move(head), std::move(archive)};
    const int rc = cli::RunJournalVerify(o, out, err);
    if (err_text) *err_text = err.str();
    return rc;
  }

  TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  std::string archive_ = dir_.File("archive");
  ManualTimeSource clock_;
};

TEST_F(RetentionTest, WithoutPruningEveryLifecycleStays) {
  // The observation of issue 18: nothing is ever removed.
  auto j = Open();
  Lifecycles(*j, 0, 10);
  const int64_t rows = Count("SELECT count(*) FROM journal");
  clock_.Advance(std::chrono::hours(24 * 100));
  Lifecycles(*j, 10, 1);
  EXPECT_GT(Count("SELECT count(*) FROM journal"), rows);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'forgotten'"), 11);
}

// Retention keeps every writer start: a kept row never loses its writer,
// even when the rows before it, and the start's own first row, are gone.
TEST_F(RetentionTest, WriterStartsStayWhenTheRowsTheyCoverGo) {
  auto j = Open();
  ASSERT_TRUE(j->RecordWriterStart("w1").ok());
  Lifecycles(*j, 0, 3);
  const PruneOptions o = Due();
  clock_.Advance(std::chrono::hours(1));
  Lifecycles(*j, 3, 1);
  auto r = j->Prune(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_GT(r->rows, 0);
  EXPECT_EQ(Count("SELECT min(seq) FROM journal"), r->last_seq + 1);
  EXPECT_EQ(*j->WriterStarts(), (std::map<int64_t, std::string>{{1, "w1"}}));
}

TEST_F(RetentionTest, RowsOlderThanTheCutoffGoAndAPrunedRowSaysWhat) {
  auto j = Open();
  Lifecycles(*j, 0, 10);
  const int64_t old_last = j->state().last_seq;
  const int64_t old_rows = Count("SELECT count(*) FROM journal");
  PruneOptions o = Due();
  clock_.Advance(std::chrono::hours(1));
  Lifecycles(*j, 10, 2);
  auto r = j->Prune(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->rows, old_rows);
  EXPECT_EQ(r->first_seq, 1);
  EXPECT_EQ(r->last_seq, old_last);
  EXPECT_EQ(r->held_by, 0);
  EXPECT_EQ(r->subjects_removed, 10);  // the forgotten sandboxes' subjects went too
  EXPECT_EQ(Count("SELECT count(*) FROM journal WHERE seq <= " + std::to_string(old_last)), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM subjects WHERE uid = 'uid-3'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM subjects WHERE uid = 'uid-11'"), 1);
  // The pruned row, readable in the events view.
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  SQLite::Statement q(db,
                      "SELECT json_extract(payload, '$.first_seq'), "
                      "json_extract(payload, '$.last_seq'), json_extract(payload, '$.rows'), "
                      "json_extract(payload, '$.head_hash'), json_extract(payload, '$.first_at') "
                      "FROM events WHERE kind = 'pruned'");
  ASSERT_TRUE(q.executeStep());
  EXPECT_EQ(q.getColumn(0).getInt64(), 1);
  EXPECT_EQ(q.getColumn(1).getInt64(), old_last);
  EXPECT_EQ(q.getColumn(2).getInt64(), old_rows);
  EXPECT_EQ(q.getColumn(3).getString().size(), 64u);
  EXPECT_EQ(q.getColumn(4).getString(), "2027-01-15T08:00:00.000Z");
  EXPECT_FALSE(q.executeStep());
}

TEST_F(RetentionTest, WhatIsKeptStillFoldsToTheProjectionsAndSurvivesARestart) {
  auto j = Open();
  Lifecycles(*j, 0, 6);
  Lifecycles(*j, 6, 3, /*forget=*/false);  // alive across the cut
  const PruneOptions o = Due();
  clock_.Advance(std::chrono::minutes(5));
  Lifecycles(*j, 9, 2);
  ASSERT_TRUE(j->Prune(o).ok());
  EXPECT_EQ(Refolded(*j), j->state());
  auto base = j->BaseState();
  ASSERT_TRUE(base.ok());
  EXPECT_EQ(base->sandboxes.size(), 3u);  // only the living are carried
  const JournalState before = j->state();
  j.reset();
  j = Open();
  EXPECT_EQ(j->state(), before);
  EXPECT_EQ(Verify(), kExitOk);
  EXPECT_EQ(ShellLastLine("sqlite3 -readonly " + path_ +
                          " < " FK_SOURCE_DIR "/schema/audit/verify_chain.sql"),
            0);
}

TEST_F(RetentionTest, APendingIntentHoldsTheCutBack) {
  auto j = Open();
  Lifecycles(*j, 0, 3);
  Snapshot s = fk::testing::HealthySnapshot("stuck");
  s.sandbox.uid = "uid-stuck";
  ASSERT_TRUE(j->Record(Evaluation{s, decide(s), "1"}).ok());
  s.workload_fence.generation = 9;
  s.history = history_for(j->state(), s.sandbox.uid);
  auto r = j->Record(Evaluation{s, decide(s), "2"});
  ASSERT_TRUE(r.ok() && r->intent_seq);
  const int64_t intent = *r->intent_seq;  // no outcome: pending
  Lifecycles(*j, 3, 3);
  clock_.Advance(std::chrono::hours(1));
  auto p = j->Prune(Due());
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->held_by, intent);
  EXPECT_LT(p->last_seq, intent);
  EXPECT_EQ(Count("SELECT min(seq) FROM journal WHERE kind != 10"), intent - 2);
  j.reset();
  j = Open();  // the pending intent is still read from its row
  EXPECT_TRUE(j->state().pending_intents.contains(intent));
}

TEST_F(RetentionTest, TheTriggersRefuseADeleteNoPrunedRowCovers) {
  auto j = Open();
  Lifecycles(*j, 0, 4);
  clock_.Advance(std::chrono::hours(1));
  Lifecycles(*j, 4, 1);
  PruneOptions o = Due();
  o.cutoff_ms -= 3'600'000;  // only the first four
  ASSERT_TRUE(j->Prune(o).ok());
  j.reset();
  SQLite::Database db(path_, SQLite::OPEN_READWRITE);
  EXPECT_THROW(db.exec("DELETE FROM journal WHERE seq = (SELECT max(seq) FROM journal)"),
               SQLite::Exception);
  EXPECT_THROW(db.exec("DELETE FROM subjects WHERE uid = 'uid-4'"), SQLite::Exception);
}

TEST_F(RetentionTest, ATrickleWaitsForABatchUnlessItIsOverdue) {
  auto j = Open();
  Lifecycles(*j, 0, 2);
  clock_.Advance(std::chrono::minutes(1));
  PruneOptions o = Due();
  o.min_rows = 256;
  o.overdue_ms = 3'600'000;
  auto r = j->Prune(o);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rows, 0);
  clock_.Advance(std::chrono::hours(2));
  o.cutoff_ms += 7'200'000;
  r = j->Prune(o);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(r->rows, 0);
}

TEST_F(RetentionTest, ReplayCheckWorksOnWhatIsRetained) {
  auto j = Open();
  Lifecycles(*j, 0, 4, /*forget=*/false);
  const PruneOptions o = Due();
  clock_.Advance(std::chrono::minutes(1));
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(j->Forget("uid-" + std::to_string(i), "deleted").ok());
  ASSERT_TRUE(j->Prune(o).ok());
  j.reset();
  auto r = fk::testing::RunShell(std::string(FK_BINARY) + " replay --check --journal " + path_ +
                                 " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_NE(r.out.find("0 divergence(s)"), std::string::npos) << r.out;
  r = fk::testing::RunShell(std::string(FK_BINARY) + " replay --journal " + path_ + " 2>&1");
  EXPECT_NE(r.out.find("pruned seq 1-"), std::string::npos) << r.out;
}

TEST_F(RetentionTest, AnUpgradedJournalsOldRowsGoTooAndTheChainStartsAfterThem) {
  fk::testing::MakeJournalFromDump(path_, "journal_v4_demo.sql");
  auto j = Open();  // upgraded to the latest schema; its rows are in events_v1
  ASSERT_GT(Count("SELECT count(*) FROM events_v1"), 0);
  const int64_t legacy_last = Count("SELECT max(seq) FROM events_v1");
  Lifecycles(*j, 0, 3);
  clock_.Advance(std::chrono::hours(1));
  Lifecycles(*j, 3, 1);
  PruneOptions o = Due();
  o.cutoff_ms -= 1'800'000;
  auto r = j->Prune(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->first_seq, 1);
  EXPECT_GT(r->last_seq, legacy_last);
  EXPECT_EQ(Count("SELECT count(*) FROM events_v1"), 0);
  EXPECT_EQ(Refolded(*j), j->state());
  j.reset();
  EXPECT_EQ(Verify(), kExitOk);
  auto replay = fk::testing::RunShell(std::string(FK_BINARY) + " replay --check --journal " +
                                      path_ + " 2>&1");
  EXPECT_EQ(replay.exit_code, 0) << replay.out;
}

// ---- the archive --------------------------------------------------------------

class ArchiveTest : public RetentionTest {
 protected:
  void SetUp() override { fs::create_directory(archive_); }
  // Three pruned ranges, each archived, and some rows kept.
  void ThreeRanges() {
    auto j = Open();
    for (int range = 0; range < 3; ++range) {
      Lifecycles(*j, range * 5, 5);
      const PruneOptions o = Due(archive_);
      clock_.Advance(std::chrono::minutes(1));
      auto r = j->Prune(o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      ASSERT_GT(r->rows, 0);
      ASSERT_FALSE(r->archive.empty());
    }
    Lifecycles(*j, 15, 2);
    head_ = j->ChainHead();
  }
  std::vector<std::string> Files() {
    auto files = ListArchives(archive_);
    EXPECT_TRUE(files.ok());
    return *files;
  }
  chain::Head head_;
};

// An archive names the writer of each of its rows as the journal did: it
// carries every start at or before its last seq (replay reads an archive
// like a journal).
TEST_F(ArchiveTest, AnArchiveCarriesTheStartsThatNameTheWritersOfItsRows) {
  auto j = Open();
  for (int range = 0; range < 2; ++range) {
    ASSERT_TRUE(j->RecordWriterStart("w" + std::to_string(range + 1)).ok());
    Lifecycles(*j, range * 5, 5);
    const PruneOptions o = Due(archive_);
    clock_.Advance(std::chrono::minutes(1));
    ASSERT_TRUE(j->Prune(o).ok());
  }
  ASSERT_TRUE(j->RecordWriterStart("w3").ok());  // after both ranges: in neither
  const std::vector<std::string> files = Files();
  ASSERT_EQ(files.size(), 2u);
  const auto writers = [](const std::string& file) {
    SQLite::Database db(file, SQLite::OPEN_READONLY);
    std::vector<std::string> out;
    SQLite::Statement q(db, "SELECT writer FROM writer_starts ORDER BY start");
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  };
  EXPECT_EQ(writers(files[0]), (std::vector<std::string>{"w1"}));
  EXPECT_EQ(writers(files[1]), (std::vector<std::string>{"w1", "w2"}));
  EXPECT_EQ(Verify(archive_), kExitOk) << "the starts do not disturb the archive's seal";
}

TEST_F(ArchiveTest, JournalAndArchiveHoldEveryLifecycleExactlyOnce) {
  ThreeRanges();
  std::vector<std::string> files = Files();
  ASSERT_EQ(files.size(), 3u);
  std::map<std::string, int> forgotten;  // uid -> files holding its `forgotten`
  std::vector<std::string> all = files;
  all.push_back(path_);
  for (const std::string& f : all) {
    SQLite::Database db(f, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, "SELECT uid FROM events WHERE kind = 'forgotten'");
    while (q.executeStep()) ++forgotten[q.getColumn(0).getString()];
  }
  ASSERT_EQ(forgotten.size(), 17u);
  for (const auto& [uid, n] : forgotten) EXPECT_EQ(n, 1) << uid;
  // Sealed: no -wal or -journal beside them, mode 0600, readable by the stock shell.
  for (const std::string& f : files) {
    EXPECT_FALSE(fs::exists(f + "-wal"));
    EXPECT_FALSE(fs::exists(f + "-journal"));
    struct stat st {};
    ASSERT_EQ(::stat(f.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    EXPECT_EQ(ShellLastLine("sqlite3 -readonly " + f +
                            " < " FK_SOURCE_DIR "/schema/audit/verify_chain.sql"),
              0);
    EXPECT_EQ(ShellLastLine("sqlite3 -readonly " + f + " 'SELECT count(*) FROM transitions'"), 5);
  }
  EXPECT_EQ(Verify(archive_), kExitOk);
}

TEST_F(ArchiveTest, ReplayAndVerifyReadAnArchiveFile) {
  ThreeRanges();
  const std::string second = Files()[1];
  auto r = fk::testing::RunShell(std::string(FK_BINARY) + " replay --check --journal " + second +
                                 " 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  std::ostringstream out, err;
  EXPECT_EQ(cli::RunJournalVerify({second, std::nullopt, std::nullopt}, out, err), kExitOk)
      << err.str();
}

TEST_F(ArchiveTest, AnExpectedHeadIsFoundInTheArchive) {
  ThreeRanges();
  auto first = ReadArchiveRange(Files()[0]);
  ASSERT_TRUE(first.ok() && *first);
  const std::string head = std::to_string((*first)->head_seq) + ":" + (*first)->head_hash;
  EXPECT_EQ(Verify(archive_, head), kExitOk);
  std::string err;
  EXPECT_EQ(Verify(std::nullopt, head, &err), kExitCheckFailed) << "pruned from the journal";
  std::string forged = head;
  forged.back() = forged.back() == '0' ? '1' : '0';
  EXPECT_EQ(Verify(archive_, forged, &err), kExitCheckFailed);
  EXPECT_NE(err.find(ArchiveName(Files()[0])), std::string::npos) << err;
}

TEST_F(ArchiveTest, AMissingFileIsAGap) {
  ThreeRanges();
  fs::remove(Files()[1]);
  std::string err;
  EXPECT_EQ(Verify(archive_, std::nullopt, &err), kExitCheckFailed);
  EXPECT_NE(err.find("a gap"), std::string::npos) << err;
}

TEST_F(ArchiveTest, AMissingLastFileIsAGapBeforeTheJournal) {
  ThreeRanges();
  fs::remove(Files()[2]);
  std::string err;
  EXPECT_EQ(Verify(archive_, std::nullopt, &err), kExitCheckFailed);
  EXPECT_NE(err.find("journal.db: mismatch"), std::string::npos) << err;
}

TEST_F(ArchiveTest, AReplacedFileIsNamed) {
  ThreeRanges();
  // The second file's rows, edited and re-chained consistently, under its name.
  const std::string second = Files()[1];
  {
    SQLite::Database db(second, SQLite::OPEN_READWRITE);
    db.exec("DROP TRIGGER journal_append_only_update");
    db.exec(
        "UPDATE journal SET body = json_set(body, '$.zz', 1) WHERE seq = "
        "(SELECT min(seq) FROM journal)");
  }
  std::string err;
  EXPECT_EQ(Verify(archive_, std::nullopt, &err), kExitCheckFailed);
  EXPECT_NE(err.find(ArchiveName(second)), std::string::npos) << err;
}

TEST_F(ArchiveTest, AFileReplacedByAnotherIntactOneIsFound) {
  ThreeRanges();
  const std::vector<std::string> files = Files();
  fs::copy_file(files[0], files[1], fs::copy_options::overwrite_existing);
  std::string err;
  EXPECT_EQ(Verify(archive_, std::nullopt, &err), kExitCheckFailed);
  EXPECT_NE(err.find(ArchiveName(files[1])), std::string::npos) << err;
}

TEST_F(ArchiveTest, AnOverlapIsFound) {
  ThreeRanges();
  // A copy of the first file under a name that sorts between the first two.
  const std::string copy = archive_ + "/" + ArchiveFileName(1, 2);
  fs::copy_file(Files()[0], copy);
  std::string err;
  EXPECT_EQ(Verify(archive_, std::nullopt, &err), kExitCheckFailed);
  EXPECT_NE(err.find("overlap"), std::string::npos) << err;
}

TEST_F(ArchiveTest, AnArchiveThatCannotBeWrittenRemovesNothing) {
  auto j = Open();
  Lifecycles(*j, 0, 4);
  const PruneOptions o = Due(dir_.File("no-such-dir"));
  clock_.Advance(std::chrono::minutes(1));
  const int64_t rows = Count("SELECT count(*) FROM journal");
  auto r = j->Prune(o);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(Count("SELECT count(*) FROM journal"), rows);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'pruned'"), 0);
  Lifecycles(*j, 4, 1);  // transitions go on
  EXPECT_GT(Count("SELECT count(*) FROM journal"), rows);
}

TEST_F(ArchiveTest, RetentionSaysOnceThatPruningStoppedAndRecovers) {
  auto j = Open();
  Lifecycles(*j, 0, 300);
  clock_.Advance(std::chrono::hours(2));
  const std::string missing = dir_.File("later");
  reconciler::Retention retention(*j, {std::chrono::hours(1), missing}, clock_);
  EXPECT_EQ(retention.Tick(), 0);
  EXPECT_EQ(retention.Tick(), 0);
  EXPECT_EQ(retention.failures(), 2u);
  fs::create_directory(missing);
  EXPECT_GT(retention.Tick(), 0);
  EXPECT_EQ(retention.rows_pruned(),
            static_cast<uint64_t>(
                Count("SELECT sum(json_extract(body, '$.n')) FROM journal WHERE kind = 10")));
  EXPECT_EQ(Files().size(), 0u);  // the fixture's own directory is untouched
  EXPECT_EQ(ListArchives(missing)->size(),
            static_cast<size_t>(Count("SELECT count(*) FROM journal WHERE kind = 10")));
}

}  // namespace
}  // namespace fk::journal
