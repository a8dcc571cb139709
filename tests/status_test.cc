// `fencekeeper status` (cli/status.h): on a scripted journal at fixed times,
// on the demo's journal, beside a writer that has it open, and its refusals.
#include "cli/status.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <sstream>

#include "cli/commands.h"
#include "domain/decision.h"
#include "journal/journal.h"
#include "test_support.h"

namespace fk::cli {
namespace {
namespace json = boost::json;
using std::chrono::milliseconds;

struct Printed {
  int code = -1;
  std::string out, err;
};

Printed Status(StatusOptions o) {
  std::ostringstream out, err;
  Printed p;
  p.code = RunStatus(o, out, err);
  p.out = out.str();
  p.err = err.str();
  return p;
}

// At 2026-12-07T02:30:00Z: "run" and "stopped" (suspended by its user) are
// admitted under generation 1 of agents' fence, "other" in team; at 02:31:00
// the fence of agents rolls to 2: "stopped" is held, "run" suspended (intent
// at 02:31:00.500, applied); "late" is decided suspend with no outcome yet.
class StatusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    journal::OpenOptions open;
    open.clock = &clock_;
    auto j = journal::Journal::Open(path_, open);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
    domain::Snapshot run = testing::HealthySnapshot("run");
    domain::Snapshot stopped = testing::HealthySnapshot("stopped");
    stopped.sandbox.should_run = false;
    stopped.workload_pod = stopped.supervisor_pod = {};
    domain::Snapshot other = testing::HealthySnapshot("other", "team");
    for (domain::Snapshot* s : {&run, &stopped, &other}) Record(*s, true);
    clock_.Advance(milliseconds(60'000));
    run.workload_fence.generation = stopped.workload_fence.generation = 2;
    Record(stopped, true);
    clock_.Advance(milliseconds(500));
    Record(run, true);
    domain::Snapshot late = testing::StaleSnapshot("late");
    Record(late, false);
  }
  void Record(domain::Snapshot& s, bool settle) {
    s.observed_at_ms = clock_.NowMs();
    auto r = journal_->Record({s, domain::decide(s), "7"});
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    if (!r->intent_seq || !settle) return;
    clock_.Advance(milliseconds(2));
    ASSERT_TRUE(journal_->RecordOutcome(*r->intent_seq, {domain::Outcome::kApplied, 7, ""}).ok());
  }
  StatusOptions Options() {
    StatusOptions o;
    o.journal = path_;
    return o;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  ManualTimeSource clock_{WallTime(std::chrono::seconds(1796610600))};  // 02:30:00Z
  std::unique_ptr<journal::Journal> journal_;
};

// Read beside the writer that has it open (a live `run`): every sandbox,
// what it is, since when, the fence change of its episode, the way out.
TEST_F(StatusTest, EverySandboxWithItsStatusEpisodeAndWayOut) {
  StatusOptions o = Options();
  o.json = true;
  const Printed p = Status(o);
  ASSERT_EQ(p.code, kExitOk) << p.err;
  const json::array items = json::parse(p.out).at("sandboxes").as_array();
  std::map<std::string, json::object> by_name;
  for (const auto& i : items) by_name[std::string(i.at("sandbox").as_string())] = i.as_object();
  ASSERT_EQ(by_name.size(), 4u) << p.out;
  EXPECT_EQ(by_name["run"]["status"], "suspended");
  EXPECT_EQ(by_name["run"]["reason"], "fence-stale");
  EXPECT_EQ(by_name["run"]["since"], "2026-12-07T02:31:00.500Z");
  EXPECT_EQ(by_name["run"]["fence"], "openshell-sandbox-workloads generation 2");
  EXPECT_EQ(by_name["run"]["fence_seen_at"], "2026-12-07T02:31:00.000Z");
  EXPECT_EQ(by_name["run"]["resume"],
            "openshell sandbox start run (OpenShell re-admits it under the current fence)");
  EXPECT_EQ(by_name["stopped"]["status"], "held");
  EXPECT_EQ(by_name["stopped"]["since"], "2026-12-07T02:31:00.000Z");
  EXPECT_EQ(by_name["late"]["status"], "suspending");
  EXPECT_NE(std::string(by_name["late"]["resume"].as_string()).find("intent seq"),
            std::string::npos);
  EXPECT_EQ(by_name["other"]["status"], "healthy");
  EXPECT_EQ(by_name["other"]["since"], "2026-12-07T02:30:00.000Z");
  EXPECT_EQ(by_name["other"]["since_exact"], true);
  EXPECT_EQ(by_name["other"]["fence"], "") << "no fence change began a healthy episode";
  EXPECT_EQ(by_name["other"]["resume"], "-");
}

// The design's hold episode (domain::starts_hold_episode): "stopped", held
// since 02:31:00, looks healthy for a pass over a cache that still shows the
// old fence, then is held again: the same object, the same episode. Once
// the object changed (its generation), a new hold is a new episode.
TEST_F(StatusTest, AHoldAcrossAStaleHealthyPassIsOneEpisode) {
  domain::Snapshot stopped = testing::HealthySnapshot("stopped");
  stopped.sandbox.should_run = false;
  stopped.workload_pod = stopped.supervisor_pod = {};
  const auto since = [&] {
    StatusOptions o = Options();
    o.json = true;
    o.status = "held";
    const Printed p = Status(o);
    const json::array items = json::parse(p.out).at("sandboxes").as_array();
    return items.size() == 1 ? std::string(items[0].at("since").as_string()) : p.out + p.err;
  };
  clock_.Advance(milliseconds(10'000));
  Record(stopped, true);  // generation 1 of the fence: healthy
  clock_.Advance(milliseconds(10'000));
  stopped.workload_fence.generation = 2;
  Record(stopped, true);
  EXPECT_EQ(since(), "2026-12-07T02:31:00.000Z");

  clock_.Advance(milliseconds(10'000));
  stopped.workload_fence.generation = 1;
  Record(stopped, true);
  clock_.Advance(milliseconds(10'000));
  ++stopped.sandbox.generation;  // the user edited it meanwhile
  stopped.workload_fence.generation = 2;
  Record(stopped, true);
  EXPECT_EQ(since(), "2026-12-07T02:31:40.502Z");
}

TEST_F(StatusTest, FiltersByNamespaceAndStatusAndPrintsAlignedColumns) {
  StatusOptions o = Options();
  o.status = "held";
  Printed p = Status(o);
  ASSERT_EQ(p.code, kExitOk) << p.err;
  std::istringstream lines(p.out);
  std::string header, row, more;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_FALSE(std::getline(lines, more)) << p.out;
  EXPECT_EQ(header.rfind("NAMESPACE  SANDBOX  STATUS  REASON", 0), 0u) << header;
  EXPECT_EQ(row.rfind("agents     stopped  held    fence-stale", 0), 0u) << row;
  EXPECT_EQ(header.find("SINCE"), row.find("2026-12-07T02:31:00.000Z")) << p.out;

  o = Options();
  o.namespaces = {"team"};
  p = Status(o);
  EXPECT_NE(p.out.find("other"), std::string::npos);
  EXPECT_EQ(p.out.find("agents"), std::string::npos) << p.out;
  o.status = "suspended";
  EXPECT_EQ(Status(o).out, "no sandbox in the journal matches\n");
}

TEST_F(StatusTest, RefusesAnUnknownStatusAndAFileThatIsNoJournal) {
  StatusOptions o = Options();
  o.status = "stopped";
  Printed p = Status(o);
  EXPECT_EQ(p.code, kExitUnusable);
  EXPECT_NE(
      p.err.find(
          "not one of suspended, held, suspending, refused, would-suspend, admitting, healthy"),
      std::string::npos)
      << p.err;
  testing::WriteBytes(dir_.File("foreign"), "hello, not a journal");
  o = Options();
  o.journal = dir_.File("foreign");
  p = Status(o);
  EXPECT_EQ(p.code, kExitUnusable);
  EXPECT_NE(p.err.find("fencekeeper status: "), std::string::npos) << p.err;
  EXPECT_EQ(testing::ReadBytes(dir_.File("foreign")), "hello, not a journal");
}

// The way out depends on why: a bypass must end, a missing fence come back.
TEST(StatusRows, TheWayOutNamesWhatMustChangeFirst) {
  StatusRow r;
  r.sandbox = "sb";
  r.verdict = "hold";
  r.observed_generation = 3;
  r.applied_generation = 3;
  EXPECT_EQ(StatusOf(r), "suspended");
  r.applied_generation = 2;  // suspended again by its user after a resume
  EXPECT_EQ(StatusOf(r), "held");
  r.reason = "fence-bypassed";
  EXPECT_EQ(ResumeHint(r, "held").rfind("remove or narrow the policies", 0), 0u);
  r.reason = "fence-missing";
  EXPECT_EQ(ResumeHint(r, "held").rfind("restore the fence policy", 0), 0u);
  // A refused intent sent again landed past the generation recorded (seed
  // 3128's case): the episode's applied outcome says it was fencekeeper's.
  r.reason = "fence-stale";
  r.episode_seq = 10;
  r.transition_seq = 12;
  r.outcome = "applied";
  EXPECT_EQ(StatusOf(r), "suspended");
  // A suspension the API server refused: the sandbox still runs.
  r.verdict = "suspend";
  r.applied_generation.reset();
  r.outcome = "failed";
  EXPECT_EQ(StatusOf(r), "refused");
  EXPECT_NE(ResumeHint(r, "refused").find("intent seq 12"), std::string::npos);
  // Enforcement off: the episode's transition is a dry run, and it still runs.
  r.outcome = "dry-run";
  EXPECT_EQ(StatusOf(r), "would-suspend");
  EXPECT_NE(ResumeHint(r, "would-suspend").find("enforcement is off"), std::string::npos);
  r.transition_seq = 8;  // refused in an earlier episode: this one decides afresh
  EXPECT_EQ(StatusOf(r), "suspending");
  r.verdict = "admitting";
  EXPECT_EQ(StatusOf(r), "admitting");
  r.verdict = "ignore";
  EXPECT_EQ(StatusOf(r), "ignored");
  EXPECT_TRUE(IsStatus("suspending"));
  EXPECT_TRUE(IsStatus("would-suspend"));
  EXPECT_FALSE(IsStatus("suspend"));
}

}  // namespace
}  // namespace fk::cli
