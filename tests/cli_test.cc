// The migrate and demo subcommands, run in-process: exit codes, messages,
// files left untouched (replay's tests: replay_test.cc).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <filesystem>
#include <sstream>

#include "cli/commands.h"
#include "common/version.h"
#include "journal/migrations.h"
#include "test_support.h"

namespace fk::cli {
namespace {
using fk::testing::TempDir;

struct Outcome {
  int code = -1;
  std::string out, err;
};

Outcome Migrate(const std::string& path, bool check) {
  std::ostringstream out, err;
  Outcome r;
  r.code = RunMigrate({path, check}, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The commit is the one the binary was built from: a commit of this
// repository (not necessarily HEAD, which may have moved since the build).
TEST(VersionFlag, NamesTheProjectVersionAndTheCommitItWasBuiltFrom) {
  const auto version = testing::RunShell(std::string(FK_BINARY) + " --version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, std::string("fencekeeper ") + FK_PROJECT_VERSION + " (commit " +
                             fk::GitCommit() + ")\n");
  const std::string commit = fk::GitCommit();
  if (testing::RunShell("git -C '" FK_SOURCE_DIR "' rev-parse HEAD 2>/dev/null").exit_code != 0) {
    EXPECT_EQ(commit, "unknown");  // built outside a clone
    return;
  }
  ASSERT_EQ(commit.size(), 12u);
  EXPECT_EQ(commit.find_first_not_of("0123456789abcdef"), std::string::npos) << commit;
  EXPECT_EQ(
      testing::RunShell("git -C '" FK_SOURCE_DIR "' cat-file -e " + commit + "^{commit}").exit_code,
      0)
      << commit << " is not a commit of " << FK_SOURCE_DIR;
}

TEST(MigrateCommand, CreatesThenReportsUpToDate) {
  TempDir dir;
  const std::string path = dir.File("j.db");
  Outcome check_missing = Migrate(path, true);
  EXPECT_EQ(check_missing.code, kExitOk);
  EXPECT_NE(check_missing.out.find("does not exist"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));  // --check changes nothing

  Outcome created = Migrate(path, false);
  EXPECT_EQ(created.code, kExitOk) << created.err;
  EXPECT_NE(created.out.find("applied 0001_init"), std::string::npos) << created.out;
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);

  Outcome check = Migrate(path, true);
  EXPECT_EQ(check.code, kExitOk);
  EXPECT_NE(check.out.find("up to date"), std::string::npos) << check.out;
  Outcome again = Migrate(path, false);
  EXPECT_NE(again.out.find("up to date"), std::string::npos) << again.out;
}

TEST(MigrateCommand, RefusesForeignFileWithExitTwoAndLeavesItAlone) {
  TempDir dir;
  const std::string path = dir.File("notes.txt");
  testing::WriteBytes(path, "not a journal");
  for (bool check : {true, false}) {
    Outcome r = Migrate(path, check);
    EXPECT_EQ(r.code, kExitUnusable);
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    EXPECT_EQ(testing::ReadBytes(path), "not a journal");
  }
}

TEST(DemoCommand, CreatesTheDirectoryItIsGiven) {
  TempDir dir;
  std::ostringstream out, err;
  DemoOptions o;
  o.directory = dir.File("new/demo");
  o.passes = 1;
  ASSERT_EQ(RunDemo(o, out, err), kExitOk) << err.str();
  EXPECT_TRUE(std::filesystem::exists(dir.File("new/demo/journal.db")));

  testing::WriteBytes(dir.File("file"), "x");  // a file where the directory should be
  o.directory = dir.File("file/demo");
  EXPECT_EQ(RunDemo(o, out, err), kExitUnusable);
  EXPECT_NE(err.str().find("cannot create the directory for its journal"), std::string::npos)
      << err.str();
}

// The incident (3 PATCHes, none after the restart), then the second act: an
// "allow DNS" policy bypasses team-healthy's fence, its 2 running sandboxes
// are suspended once for it and nothing else is written.
TEST(DemoCommand, ReportsThreePatchesAndNoneAfterRestartThenTheBypassAct) {
  TempDir dir;
  std::ostringstream out, err;
  DemoOptions o;
  o.directory = dir.path().string();
  o.passes = 5;
  ASSERT_EQ(RunDemo(o, out, err), kExitOk) << err.str();
  const std::string report = out.str();
  EXPECT_NE(report.find("5 resync passes: 3 PATCHes, 3 warnings"), std::string::npos) << report;
  EXPECT_NE(report.find("5 resync passes: 0 PATCHes, 0 warnings, 0 journal rows, 0 API requests"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("totals: 3 PATCHes, 3 warnings"), std::string::npos) << report;
  EXPECT_NE(report.find("second act: 2 PATCHes, 2 warnings"), std::string::npos) << report;

  SQLite::Database db(dir.File("journal.db"), SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM transitions WHERE outcome = 'applied'").getInt(),
            5);
  EXPECT_EQ(
      db.execAndGet("SELECT count(*) FROM transitions WHERE sandbox LIKE 'stopped-%'").getInt(), 0);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM transitions WHERE namespace = 'team-healthy' "
                          "AND reason = 'fence-bypassed' AND outcome = 'applied'")
                .getInt(),
            2);
  EXPECT_EQ(db.execAndGet("SELECT count(*) FROM sandbox_state WHERE verdict = 'hold'").getInt(),
            12);
  EXPECT_EQ(db.execAndGet(
                  "SELECT count(DISTINCT generation) FROM fence_observations "
                  "WHERE namespace = 'openshell-agents' AND policy = 'openshell-sandbox-workloads'")
                .getInt(),
            2);
}

}  // namespace
}  // namespace fk::cli

namespace fk::cli {
namespace {

TEST(SimCommand, RejectsMalformedFlagsWithExitTwo) {
  auto run = [](SimCommandOptions o) {
    std::ostringstream out, err;
    const int code = RunSim(o, out, err);
    return std::make_pair(code, err.str());
  };
  SimCommandOptions bad_fault;
  bad_fault.faults = {"patch:sandboxes"};
  auto [c1, e1] = run(bad_fault);
  EXPECT_EQ(c1, kExitUnusable);
  EXPECT_NE(e1.find("--fault takes VERB:RESOURCE:STATUS"), std::string::npos) << e1;
  SimCommandOptions bad_listen;
  bad_listen.listen = "no-port";
  EXPECT_EQ(run(bad_listen).first, kExitUnusable);
  SimCommandOptions bad_duration;
  bad_duration.drop_watches_every = "soon";
  auto [c3, e3] = run(bad_duration);
  EXPECT_EQ(c3, kExitUnusable);
  EXPECT_NE(e3.find("--drop-watches-every"), std::string::npos);
  SimCommandOptions bad_scenario;
  bad_scenario.scenario = "/no/such/file.yaml";
  auto [c4, e4] = run(bad_scenario);
  EXPECT_EQ(c4, kExitUnusable);
  EXPECT_NE(e4.find("/no/such/file.yaml"), std::string::npos);
}

}  // namespace
}  // namespace fk::cli
