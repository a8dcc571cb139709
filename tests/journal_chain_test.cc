// The journal's hash chain (docs/journal-chain.md): every row fencekeeper
// appends is chained; the stock sqlite3 shell recomputes the chain with
// schema/audit/verify_chain.sql and counts 0 mismatches on an intact journal
// and at least one after each kind of tampering; the head survives a restart
// and does not move on a refused write.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "domain/fold.h"
#include "journal/chain.h"
#include "journal/journal.h"
#include "journal_fixture.h"
#include "test_support.h"

namespace fk::journal {
namespace {
using namespace fk::domain;
using fk::testing::TempDir;

// What the stock shell's verify_chain.sql prints last: the mismatches.
int64_t ShellMismatches(const std::string& journal) {
  return fk::testing::StockShellVerify(journal).mismatches;
}

class JournalChainTest : public ::testing::Test {
 protected:
  JournalChainTest() : clock_(std::chrono::system_clock::from_time_t(1'800'000'000)) {}

  std::unique_ptr<Journal> Open() {
    OpenOptions o;
    o.refuse_writes = [this] { return refuse_; };
    return fk::testing::OpenJournal(path_, &clock_, o);
  }
  // A few lifecycles: healthy, suspended by a fence roll (intent, outcome), forgotten.
  void Write(Journal& j, int sandboxes) {
    for (int i = 0; i < sandboxes; ++i) {
      Snapshot s = fk::testing::HealthySnapshot("sb-" + std::to_string(i));
      s.sandbox.uid = "uid-" + std::to_string(i);
      s.history = history_for(j.state(), s.sandbox.uid);
      ASSERT_TRUE(j.Record(Evaluation{s, decide(s), "1"}).ok());
      s.workload_fence.generation = 2;
      s.history = history_for(j.state(), s.sandbox.uid);
      auto r = j.Record(Evaluation{s, decide(s), "2"});
      ASSERT_TRUE(r.ok());
      if (r->intent_seq) {
        ASSERT_TRUE(j.RecordOutcome(*r->intent_seq, {Outcome::kApplied, 3, ""}).ok());
      }
      clock_.Advance(std::chrono::seconds(1));
    }
  }
  // Runs `sql` on the journal with the append-only triggers dropped: what
  // whoever can write the volume can do.
  void Tamper(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READWRITE);
    db.exec(
        "DROP TRIGGER IF EXISTS journal_append_only_update;"
        "DROP TRIGGER IF EXISTS journal_append_only_delete;"
        "DROP TRIGGER IF EXISTS subjects_append_only_update;");
    db.exec(sql);
  }
  // A fresh intact journal, closed (checkpointed) so that tampering sees it all.
  void WriteIntact() {
    auto j = Open();
    Write(*j, 4);
    head_ = j->ChainHead();
  }

  TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  ManualTimeSource clock_;
  bool refuse_ = false;
  chain::Head head_;
};

TEST(Chain, Sha3IsTheStandardSha3_256) {
  EXPECT_EQ(chain::Sha3Hex("abc"),
            "3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532");
}

TEST(Chain, TheCanonicalFormSpellsEveryFieldUnambiguously) {
  chain::RowText row{7, 1000, 9, 5, "ns", "a|b", "u", "", "{}"};
  EXPECT_EQ(chain::Canonical("P", row), "P|7|1000|9|5|2:ns3:a|b1:u0:2:{}");
  row.ref.reset();
  EXPECT_EQ(chain::Canonical("P", row), "P|7|1000|9||2:ns3:a|b1:u0:2:{}");
}

TEST_F(JournalChainTest, EveryRowIsChainedAndTheStockShellAgrees) {
  WriteIntact();
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM journal WHERE hash IS NULL").getInt64(), 0);
  EXPECT_GT(db.execAndGet("SELECT count(*) FROM journal").getInt64(), 8);
  EXPECT_EQ(db.execAndGet("SELECT seq FROM journal_head").getInt64(), head_.seq);
  EXPECT_EQ(db.execAndGet("SELECT hash FROM journal_head").getString(), head_.hash);
  EXPECT_EQ(ShellMismatches(path_), 0);
}

TEST_F(JournalChainTest, TheHeadSurvivesARestartAndTheChainGoesOn) {
  WriteIntact();
  auto j = Open();
  EXPECT_EQ(j->ChainHead().hash, head_.hash);
  Write(*j, 1);
  EXPECT_GT(j->ChainHead().seq, head_.seq);
  j.reset();
  EXPECT_EQ(ShellMismatches(path_), 0);
}

TEST_F(JournalChainTest, ARefusedWriteDoesNotMoveTheHead) {
  auto j = Open();
  Write(*j, 1);
  const chain::Head before = j->ChainHead();
  refuse_ = true;
  Snapshot s = fk::testing::HealthySnapshot("sb-x");
  s.sandbox.uid = "uid-x";
  EXPECT_FALSE(j->Record(Evaluation{s, decide(s), "1"}).ok());
  EXPECT_EQ(j->ChainHead().hash, before.hash);
  refuse_ = false;
  ASSERT_TRUE(j->Record(Evaluation{s, decide(s), "1"}).ok());
  j.reset();
  EXPECT_EQ(ShellMismatches(path_), 0);
}

struct Tampering {
  std::string what;
  std::string sql;
};
void PrintTo(const Tampering& t, std::ostream* os) { *os << t.what; }

class JournalChainTamperTest : public JournalChainTest,
                               public ::testing::WithParamInterface<Tampering> {};

TEST_P(JournalChainTamperTest, TheStockShellCountsAMismatch) {
  WriteIntact();
  ASSERT_EQ(ShellMismatches(path_), 0);
  Tamper(GetParam().sql);
  EXPECT_GT(ShellMismatches(path_), 0) << GetParam().what;
}

// The fifth and sixth rows.
const std::string kFifth = "(SELECT seq FROM journal ORDER BY seq LIMIT 1 OFFSET 4)";
const std::string kSixth = "(SELECT seq FROM journal ORDER BY seq LIMIT 1 OFFSET 5)";
const std::string kSwap =
    "CREATE TEMP TABLE a AS SELECT * FROM journal WHERE seq = " + kFifth +
    ";"
    "CREATE TEMP TABLE b AS SELECT * FROM journal WHERE seq = " +
    kSixth +
    ";"
    "UPDATE journal SET at = (SELECT at FROM b), kind = (SELECT kind FROM b), "
    "subject = (SELECT subject FROM b), ref = (SELECT ref FROM b), body = (SELECT body FROM b), "
    "hash = (SELECT hash FROM b) WHERE seq = (SELECT seq FROM a);"
    "UPDATE journal SET at = (SELECT at FROM a), kind = (SELECT kind FROM a), "
    "subject = (SELECT subject FROM a), ref = (SELECT ref FROM a), body = (SELECT body FROM a), "
    "hash = (SELECT hash FROM a) WHERE seq = (SELECT seq FROM b);";

INSTANTIATE_TEST_SUITE_P(
    EveryKind, JournalChainTamperTest,
    ::testing::Values(
        Tampering{"an edited body",
                  "UPDATE journal SET body = json_set(body, '$.zz', 1) WHERE seq = " + kFifth},
        Tampering{"an edited recorded_at", "UPDATE journal SET at = at + 1 WHERE seq = " + kFifth},
        Tampering{"an edited kind", "UPDATE journal SET kind = 2 WHERE seq = " + kFifth},
        Tampering{"an edited uid", "UPDATE subjects SET uid = 'someone-else' WHERE uid = 'uid-1'"},
        Tampering{"a deleted row", "DELETE FROM journal WHERE seq = " + kFifth},
        Tampering{"an inserted row",
                  "INSERT INTO journal (seq, at, kind, subject, ref, body, hash) "
                  "SELECT seq * 1000, at, 7, subject, NULL, '[]', hash FROM journal "
                  "WHERE seq = " +
                      kFifth},
        Tampering{"swapped rows", kSwap}));

// ---- fencekeeper journal verify ------------------------------------------------

struct Verified {
  int exit_code;
  std::string out, err;
};

class JournalVerifyTest : public JournalChainTest {
 protected:
  Verified Verify(std::optional<std::string> expect_head = std::nullopt) {
    std::ostringstream out, err;
    cli::VerifyOptions o{path_, std::move(expect_head), std::nullopt};
    const int rc = cli::RunJournalVerify(o, out, err);
    return {rc, out.str(), err.str()};
  }
  int64_t SeqAt(int offset) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db
        .execAndGet("SELECT seq FROM journal ORDER BY seq LIMIT 1 OFFSET " + std::to_string(offset))
        .getInt64();
  }
};

TEST_F(JournalVerifyTest, AnIntactJournalVerifiesAndPrintsItsHeadWritingNothing) {
  WriteIntact();
  const std::string before = fk::testing::ReadBytes(path_);
  const auto files = [this] {
    std::set<std::string> names;
    for (const auto& f : std::filesystem::directory_iterator(dir_.path()))
      names.insert(f.path().filename().string());
    return names;
  };
  const auto listed = files();
  const Verified v = Verify(head_.ToString());
  EXPECT_EQ(v.exit_code, cli::kExitOk) << v.err;
  EXPECT_NE(v.out.find("head " + head_.ToString() + "\n"), std::string::npos) << v.out;
  EXPECT_EQ(fk::testing::ReadBytes(path_), before);
  EXPECT_EQ(files(), listed);
}

TEST_F(JournalVerifyTest, AnEditedRowIsAMismatchAtItsSeq) {
  WriteIntact();
  const int64_t fifth = SeqAt(4);
  Tamper("UPDATE journal SET body = json_set(body, '$.zz', 1) WHERE seq = " + kFifth);
  const Verified v = Verify();
  EXPECT_EQ(v.exit_code, cli::kExitCheckFailed);
  EXPECT_NE(v.err.find("mismatch at seq " + std::to_string(fifth) + ":"), std::string::npos)
      << v.err;
  EXPECT_NE(v.err.find(path_), std::string::npos) << "names the file: " << v.err;
}

TEST_F(JournalVerifyTest, ADeletedRowIsAMismatchAtTheRowAfterIt) {
  WriteIntact();
  const int64_t sixth = SeqAt(5);
  Tamper("DELETE FROM journal WHERE seq = " + kFifth);
  const Verified v = Verify();
  EXPECT_EQ(v.exit_code, cli::kExitCheckFailed);
  EXPECT_NE(v.err.find("mismatch at seq " + std::to_string(sixth) + ":"), std::string::npos)
      << v.err;
}

// Cut back to an earlier consistent state (as an older copy put in its place):
// chain and projections agree, only a head kept since shows what is gone.
TEST_F(JournalVerifyTest, ATruncatedTailIsSeenAgainstTheHeadAnAuditorKept) {
  WriteIntact();
  const std::string earlier = fk::testing::ReadBytes(path_);
  {
    auto j = Open();
    Write(*j, 1);
    head_ = j->ChainHead();
  }
  fk::testing::WriteBytes(path_, earlier);
  EXPECT_EQ(Verify().exit_code, cli::kExitOk) << "the chain alone cannot see a cut tail";
  const Verified v = Verify(head_.ToString());
  EXPECT_EQ(v.exit_code, cli::kExitCheckFailed);
  EXPECT_NE(v.err.find("tail is gone"), std::string::npos) << v.err;
}

TEST_F(JournalVerifyTest, ARewrittenChainIsSeenAgainstTheHeadAnAuditorKept) {
  WriteIntact();
  const std::string other(64, 'a');
  const Verified v = Verify(std::to_string(head_.seq) + ":" + other);
  EXPECT_EQ(v.exit_code, cli::kExitCheckFailed);
  EXPECT_NE(v.err.find("not " + other), std::string::npos) << v.err;
}

TEST_F(JournalVerifyTest, ProjectionsThatNoLongerMatchTheEventsAreAMismatch) {
  WriteIntact();
  Tamper("DELETE FROM sandbox_projection WHERE sandbox_uid = 'uid-2'");
  const Verified v = Verify();
  EXPECT_EQ(v.exit_code, cli::kExitCheckFailed);
  EXPECT_NE(v.err.find("projection"), std::string::npos) << v.err;
}

TEST_F(JournalVerifyTest, UnusableInputExitsTwo) {
  fk::testing::WriteBytes(path_, "not a journal at all, not even SQLite");
  EXPECT_EQ(Verify().exit_code, cli::kExitUnusable);
  std::filesystem::remove(path_);
  WriteIntact();
  const Verified v = Verify("12:xyz");
  EXPECT_EQ(v.exit_code, cli::kExitUnusable);
  EXPECT_NE(v.err.find("--expect-head"), std::string::npos) << v.err;
}

}  // namespace
}  // namespace fk::journal
