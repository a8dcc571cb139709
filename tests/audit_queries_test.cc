// The audit queries in schema/audit/, run as their usage lines say: through
// the stock sqlite3 shell, against the journal the demo writes (and hand-made
// ones). Each prints a header line over aligned columns; sandbox_timeline.sql
// without its parameters stops with a message; fence_change_to_suspension.sql
// charges each suspension to the episode it ends.
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "cli/commands.h"
#include "domain/fold.h"
#include "journal/journal.h"
#include "journal_fixture.h"
#include "test_support.h"

namespace fk {
namespace {

using Row = std::map<std::string, std::string>;  // column header -> cell

struct Printed {
  std::vector<std::string> headers;
  std::vector<Row> rows;
  std::string out, err;
  int exit_code = -1;
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string Trim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// `.mode column` output: a header line, a line of dashes whose runs give the
// columns' widths, then the rows.
void ParseColumns(Printed& p) {
  const auto lines = Lines(p.out);
  if (lines.size() < 2) return;
  std::vector<std::pair<size_t, size_t>> spans;  // start, width
  for (size_t at = lines[1].find('-'); at != std::string::npos;) {
    const size_t end = lines[1].find(' ', at);
    const size_t width = (end == std::string::npos ? lines[1].size() : end) - at;
    spans.emplace_back(at, width);
    at = end == std::string::npos ? end : lines[1].find('-', end);
  }
  const auto cell = [&](const std::string& line, size_t c) {
    return spans[c].first < line.size() ? Trim(line.substr(spans[c].first, spans[c].second)) : "";
  };
  for (size_t c = 0; c < spans.size(); ++c) p.headers.push_back(cell(lines[0], c));
  for (size_t l = 2; l < lines.size(); ++l) {
    Row r;
    for (size_t c = 0; c < spans.size(); ++c) r[p.headers[c]] = cell(lines[l], c);
    p.rows.push_back(r);
  }
}

// Runs `command` (sh, in the source tree so that schema/audit/... resolves).
Printed Shell(const std::string& command) {
  testing::TempDir dir;
  Printed p;
  const auto r =
      testing::RunShell("cd " FK_SOURCE_DIR " && { " + command + "; } 2> " + dir.File("err"));
  p.out = r.out;
  p.exit_code = r.exit_code;
  p.err = testing::ReadBytes(dir.File("err"));
  ParseColumns(p);
  return p;
}

// sqlite3 -readonly JOURNAL [-cmd ".parameter set @K V"]... < schema/audit/FILE
Printed Audit(const std::string& journal, const std::string& file,
              const std::map<std::string, std::string>& params = {}) {
  std::string command = "sqlite3 -readonly '" + journal + "'";
  for (const auto& [k, v] : params)
    command.append(" -cmd '.parameter set ").append(k).append(" ").append(v).append("'");
  return Shell(command + " < schema/audit/" + file);
}

// The command in a file's usage comment ("--   sqlite3 ... \" and its
// continuation lines), with journal.db replaced by `journal`.
std::string UsageCommand(const std::string& file, const std::string& journal) {
  std::string command;
  bool in = false;
  for (const auto& line : Lines(testing::ReadBytes(FK_SOURCE_DIR "/schema/audit/" + file))) {
    if (line.rfind("--   sqlite3 ", 0) == 0) in = true;
    if (!in) continue;
    std::string part = line.substr(line.find_first_not_of(' ', 2));  // after "--" and indent
    const bool more = !part.empty() && part.back() == '\\';
    if (more) part.pop_back();
    command += part;
    if (!more) break;
  }
  return std::regex_replace(command, std::regex(R"(\bjournal\.db\b)"), "'" + journal + "'");
}

// A journal where the process died between intent and outcome.
std::string PendingIntentJournal(const testing::TempDir& dir) {
  auto j = journal::Journal::Open(dir.File("pending.db"));
  EXPECT_TRUE(j.ok());
  domain::Snapshot s = testing::StaleSnapshot("x");
  EXPECT_TRUE((*j)->Record({s, domain::decide(s), "7"}).ok());
  return dir.File("pending.db");
}

// Schema 9's fence_bypasses: sandbox sb in `agents` observed with the
// widening policies [] -> [allow-dns egress] (suspended) -> the same, held ->
// [allow-dns egress, ssh ingress] -> []; sandbox other in `team` observed
// first with [allow-dns egress] between sb's second and third observations.
// Returns the journal's path; `observed` gets "seq|recorded_at" of each of
// sb's observations, and `other` of other's.
std::string BypassJournal(const testing::TempDir& dir, std::vector<std::string>* observed,
                          std::vector<std::string>* other) {
  const std::string path = dir.File("bypass.db");
  ManualTimeSource clock;
  {
    journal::OpenOptions open;
    open.clock = &clock;
    auto j = journal::Journal::Open(path, open);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    if (!j.ok()) return path;
    const auto record = [&](domain::Snapshot s) {
      s.history = domain::history_for((*j)->state(), s.sandbox.uid);
      auto r = (*j)->Record({s, domain::decide(s), "1"});
      EXPECT_TRUE(r.ok()) << r.status().ToString();
      clock.Advance(std::chrono::seconds(3));
      return r.ok() ? *r : journal::Recorded{};
    };
    const domain::WideningPolicy dns{"allow-dns", "uid-allow-dns", 2, domain::Widens::kEgress};
    const domain::WideningPolicy ssh{"ssh", "uid-ssh", 5, domain::Widens::kIngress};
    domain::Snapshot s = testing::HealthySnapshot("sb");
    record(s);
    s.bypass = {dns};
    const auto suspended = record(s);
    EXPECT_TRUE(suspended.intent_seq) << "a bypassed fence is suspended";
    if (suspended.intent_seq) {
      EXPECT_TRUE(
          (*j)->RecordOutcome(*suspended.intent_seq, {domain::Outcome::kApplied, 3, ""}).ok());
    }
    domain::Snapshot o = testing::HealthySnapshot("other", "team");
    o.bypass = {dns};
    record(o);
    s.sandbox.generation = 3;  // suspended, held behind the same list
    s.sandbox.should_run = false;
    record(s);
    s.bypass = {dns, ssh};
    record(s);
    s.bypass = {};
    record(s);
  }
  const std::string seqs =
      "SELECT seq || '|' || recorded_at FROM events WHERE kind = 'sandbox_observed' AND uid = ";
  *observed = testing::Rows(path, seqs + "'uid-agents-sb' ORDER BY seq");
  *other = testing::Rows(path, seqs + "'uid-team-other' ORDER BY seq");
  return path;
}

// One row per widening policy of each observation whose list changed from
// the same sandbox's previous one; unchanged and empty lists have none.
TEST(AuditFenceBypasses, OneRowPerPolicyOfEachChangedList) {
  testing::TempDir dir;
  std::vector<std::string> sb, other;
  const std::string path = BypassJournal(dir, &sb, &other);
  ASSERT_EQ(sb.size(), 5u) << "each of sb's observations is recorded";
  ASSERT_EQ(other.size(), 1u);
  const std::string sb_is = "|agents|sb|uid-agents-sb|";
  EXPECT_EQ(testing::Rows(path, "SELECT * FROM fence_bypasses ORDER BY seq, policy"),
            (std::vector<std::string>{
                sb[1] + sb_is + "allow-dns|uid-allow-dns|2|egress",
                other[0] + "|team|other|uid-team-other|allow-dns|uid-allow-dns|2|egress",
                sb[3] + sb_is + "allow-dns|uid-allow-dns|2|egress",
                sb[3] + sb_is + "ssh|uid-ssh|5|ingress"}));
  EXPECT_EQ(testing::Rows(path, "SELECT sandbox, reason FROM transitions ORDER BY seq"),
            (std::vector<std::string>{"sb|fence-bypassed", "other|fence-bypassed"}));
  // schema/audit/fence_bypasses.sql prints them per sandbox.
  std::vector<std::string> printed;
  for (auto& r : Audit(path, "fence_bypasses.sql").rows)
    printed.push_back(r["namespace"] + " " + r["sandbox"] + " " + r["seq"] + " " + r["policy"] +
                      " " + r["policy_generation"] + " " + r["widens"]);
  const auto seq = [](const std::string& row) { return row.substr(0, row.find('|')); };
  EXPECT_EQ(printed,
            (std::vector<std::string>{"agents sb " + seq(sb[1]) + " allow-dns 2 egress",
                                      "agents sb " + seq(sb[3]) + " allow-dns 2 egress",
                                      "agents sb " + seq(sb[3]) + " ssh 5 ingress",
                                      "team other " + seq(other[0]) + " allow-dns 2 egress"}));
  // The events view spells the list out.
  EXPECT_EQ(
      testing::Rows(
          path, "SELECT json_extract(payload, '$.bypass') FROM events WHERE seq = " + seq(sb[3])),
      std::vector<std::string>{
          R"([{"policy":"allow-dns","uid":"uid-allow-dns","generation":2,"widens":"egress"},)"
          R"({"policy":"ssh","uid":"uid-ssh","generation":5,"widens":"ingress"}])"});
}

class AuditQueries : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempDir();
    std::ostringstream out, err;
    cli::DemoOptions o;
    o.directory = dir_->path().string();
    o.passes = 2;
    ASSERT_EQ(cli::RunDemo(o, out, err), cli::kExitOk) << err.str();
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string Journal() { return dir_->File("journal.db"); }
  static testing::TempDir* dir_;
};
testing::TempDir* AuditQueries::dir_ = nullptr;

// Issue 19: the usage lines printed pipe-separated rows with no header. Each
// usage command, run exactly as written, now prints the columns' names.
TEST_F(AuditQueries, EveryUsageLinePrintsColumnHeaders) {
  const std::map<std::string, std::vector<std::string>> want = {
      {"fence_change_to_suspension.sql",
       {"namespace", "sandbox", "reason", "fence", "fence_generation", "fence_seen_at",
        "resumed_at", "episode_began_with", "suspended_at", "seconds"}},
      {"fence_bypasses.sql",
       {"namespace", "sandbox", "seq", "recorded_at", "policy", "policy_generation", "widens"}},
      {"fence_generation_history.sql",
       {"namespace", "policy", "seq", "recorded_at", "policy_uid", "generation", "intact"}},
      {"held_behind_stale_fence.sql", {"namespace", "reason", "held", "sandboxes"}},
      {"intents_without_outcome.sql",
       {"seq", "recorded_at", "namespace", "sandbox", "sandbox_uid", "reason",
        "observed_generation", "detail"}},
      {"sandbox_timeline.sql", {"seq", "recorded_at", "kind", "what"}},
      {"transitions_in_window.sql",
       {"seq", "recorded_at", "namespace", "sandbox", "reason", "outcome", "detail"}},
  };
  // sqlite3 prints no header over no rows: each file is run on a journal
  // where it has some (the usage line's window widened to the demo's).
  testing::TempDir dir;
  const std::string pending = PendingIntentJournal(dir);
  std::vector<std::string> observed, other;
  const std::string bypassed = BypassJournal(dir, &observed, &other);
  const std::map<std::string, std::string> journal_for = {{"intents_without_outcome.sql", pending},
                                                          {"fence_bypasses.sql", bypassed}};
  for (const auto& [file, headers] : want) {
    std::string command =
        UsageCommand(file, journal_for.contains(file) ? journal_for.at(file) : Journal());
    command =
        std::regex_replace(command, std::regex("@from [0-9TZ:.+-]+"), "@from 2000-01-01T00:00:00Z");
    command =
        std::regex_replace(command, std::regex("@to [0-9TZ:.+-]+"), "@to 9999-01-01T00:00:00Z");
    ASSERT_NE(command.find("sqlite3 -readonly"), std::string::npos) << file;
    const Printed p = Shell(command);
    EXPECT_EQ(p.exit_code, 0) << file << ": " << command << "\n" << p.err;
    EXPECT_EQ(p.headers, headers) << file << ":\n" << p.out;
    EXPECT_EQ(p.out.find('|'), std::string::npos) << file << ": not pipe-separated\n" << p.out;
  }
}

// The demo: the fence roll suspends openshell-agents' three running
// sandboxes, then an "allow DNS" policy team-healthy's two (its second act).
TEST_F(AuditQueries, TransitionsInAWindow) {
  auto all = Audit(Journal(), "transitions_in_window.sql").rows;
  ASSERT_EQ(all.size(), 5u);
  std::set<std::string> suspended;
  for (auto& r : all) {
    EXPECT_EQ(r["outcome"], "applied");
    suspended.insert(r["namespace"] + " " + r["sandbox"] + " " + r["reason"]);
  }
  EXPECT_EQ(suspended,
            (std::set<std::string>{
                "openshell-agents active-1 fence-stale", "openshell-agents active-2 fence-stale",
                "openshell-agents active-3 fence-stale", "team-healthy healthy-1 fence-bypassed",
                "team-healthy healthy-2 fence-bypassed"}));
  EXPECT_TRUE(Audit(Journal(), "transitions_in_window.sql", {{"@to", "2000-01-01T00:00:00Z"}})
                  .rows.empty());
  EXPECT_EQ(
      Audit(Journal(), "transitions_in_window.sql", {{"@from", all[1]["recorded_at"]}}).rows.size(),
      4u);
}

TEST_F(AuditQueries, HeldBehindAStaleFenceByNamespace) {
  auto rows = Audit(Journal(), "held_behind_stale_fence.sql").rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["namespace"], "openshell-agents");
  EXPECT_EQ(rows[0]["reason"], "fence-stale");
  EXPECT_EQ(rows[0]["held"], "10");
  EXPECT_EQ(rows[1]["namespace"], "team-healthy");
  EXPECT_EQ(rows[1]["reason"], "fence-bypassed");
  EXPECT_EQ(rows[1]["sandboxes"], "healthy-1, healthy-2");
}

TEST_F(AuditQueries, FenceGenerationHistory) {
  std::vector<std::string> got;
  for (auto& r : Audit(Journal(), "fence_generation_history.sql").rows)
    got.push_back(r["namespace"] + " " + r["policy"] + " gen " + r["generation"] + " intact " +
                  r["intact"]);
  EXPECT_EQ(got, (std::vector<std::string>{
                     "openshell-agents openshell-sandbox-supervisors gen 1 intact 1",
                     "openshell-agents openshell-sandbox-workloads gen 1 intact 1",
                     "openshell-agents openshell-sandbox-workloads gen 2 intact 1",
                     "team-healthy openshell-sandbox-supervisors gen 1 intact 1",
                     "team-healthy openshell-sandbox-workloads gen 1 intact 1"}));
}

TEST_F(AuditQueries, TimeFromFenceChangeToSuspension) {
  auto rows = Audit(Journal(), "fence_change_to_suspension.sql").rows;
  ASSERT_EQ(rows.size(), 5u);
  for (auto& r : rows) {
    // team-healthy's episodes began when allow-dns was seen widening each
    // sandbox's fence, not when its namespace's fences were first observed.
    const bool bypassed = r["namespace"] == "team-healthy";
    EXPECT_EQ(r["fence"], bypassed ? "allow-dns" : domain::kWorkloadPolicyName) << r["sandbox"];
    EXPECT_EQ(r["fence_generation"], bypassed ? "1" : "2");
    EXPECT_EQ(r["episode_began_with"], bypassed ? "fence bypassed" : "fence change");
    EXPECT_EQ(r["resumed_at"], "");
    EXPECT_GE(std::stod(r["seconds"]), 0.0);
    EXPECT_LT(std::stod(r["seconds"]), 30.0);
  }
}

TEST_F(AuditQueries, IntentsWithoutOutcome) {
  EXPECT_TRUE(Audit(Journal(), "intents_without_outcome.sql").rows.empty());
  testing::TempDir dir;
  auto rows = Audit(PendingIntentJournal(dir), "intents_without_outcome.sql").rows;
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["sandbox"], "x");
  EXPECT_EQ(rows[0]["reason"], "fence-stale");
}

TEST_F(AuditQueries, TimelineOfOneSandbox) {
  auto rows = Audit(Journal(), "sandbox_timeline.sql",
                    {{"@namespace", "openshell-agents"}, {"@sandbox", "active-1"}})
                  .rows;
  const std::vector<std::string> want_in_order = {"fence_observed", "sandbox_observed", "decided",
                                                  "fence_observed", "sandbox_observed", "decided",
                                                  "suspend_intent", "suspend_outcome"};
  size_t k = 0;
  for (auto& r : rows) {
    if (k < want_in_order.size() && r["kind"] == want_in_order[k]) ++k;
  }
  EXPECT_EQ(k, want_in_order.size()) << "timeline kinds out of order";
  bool applied = false;
  for (auto& r : rows)
    applied |= r["kind"] == "suspend_outcome" && r["what"].rfind("applied at generation", 0) == 0;
  EXPECT_TRUE(applied);
  for (auto& r : rows) EXPECT_NE(r["what"], "") << r["kind"];
  EXPECT_EQ(Audit(Journal(), "sandbox_timeline.sql",
                  {{"@namespace", "team-healthy"}, {"@sandbox", "active-1"}})
                .rows.size(),
            2u);  // only that namespace's fences
  // The observation that saw allow-dns says so.
  size_t widened = 0;
  for (auto& r : Audit(Journal(), "sandbox_timeline.sql",
                       {{"@namespace", "team-healthy"}, {"@sandbox", "healthy-1"}})
                     .rows) {
    const std::string what = r["what"];
    if (r["kind"] == "sandbox_observed" &&
        what.find(", widened by allow-dns (egress)") != what.npos)
      ++widened;
  }
  EXPECT_GE(widened, 1u);
}

// Issue 19: without its parameters it printed nothing and succeeded.
TEST_F(AuditQueries, TimelineWithoutItsParametersSaysWhatItNeeds) {
  for (const auto& params : std::vector<std::map<std::string, std::string>>{
           {}, {{"@namespace", "openshell-agents"}}, {{"@sandbox", "active-1"}}}) {
    const Printed p = Audit(Journal(), "sandbox_timeline.sql", params);
    EXPECT_NE(p.exit_code, 0) << p.out;
    EXPECT_NE(p.err.find("sandbox_timeline.sql needs @namespace and @sandbox"), std::string::npos)
        << p.err;
    EXPECT_EQ(p.out, "") << "no rows, no header";
  }
}

// Issue 19: a sandbox suspended after a fence change, resumed by hand an hour
// later and suspended again 5 s after that: the second suspension belongs to
// the episode the resume began, not to the fence change.
TEST(AuditEpisodes, AResumeAndResuspensionIsNotChargedToTheFenceChange) {
  testing::TempDir dir;
  ManualTimeSource clock;
  {
    journal::OpenOptions open;
    open.clock = &clock;
    auto j = journal::Journal::Open(dir.File("j.db"), open);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    const auto suspend = [&](const domain::Snapshot& s, const std::string& rv) {
      auto r = (*j)->Record({s, domain::decide(s), rv});
      ASSERT_TRUE(r.ok() && r->intent_seq) << r.status().ToString();
      clock.Advance(std::chrono::seconds(2));
      ASSERT_TRUE((*j)->RecordOutcome(*r->intent_seq, {domain::Outcome::kApplied, 3, ""}).ok());
    };
    domain::Snapshot s = testing::HealthySnapshot("sb");
    ASSERT_TRUE((*j)->Record({s, domain::decide(s), "1"}).ok());
    clock.Advance(std::chrono::seconds(10));
    s.workload_fence.generation = 2;  // the fence change, seen now
    ASSERT_TRUE((*j)->Record({s, domain::decide(s), "2"}).ok());
    clock.Advance(std::chrono::seconds(1));
    suspend(s, "3");  // suspended 3 s after the change
    clock.Advance(std::chrono::hours(1));
    s.sandbox.generation = 4;  // resumed by hand: running again, the fence unchanged
    s.history.applied_generation = 3;
    ASSERT_TRUE((*j)->Record({s, domain::decide(s), "5"}).ok());
    clock.Advance(std::chrono::seconds(3));
    s.sandbox.generation = 5;
    suspend(s, "6");  // suspended again 5 s after the resume was seen
  }
  auto rows = Audit(dir.File("j.db"), "fence_change_to_suspension.sql").rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["episode_began_with"], "fence change");
  EXPECT_EQ(rows[0]["seconds"], "3.0");
  EXPECT_EQ(rows[1]["episode_began_with"], "resumed");
  EXPECT_EQ(rows[1]["fence_generation"], "2");
  EXPECT_NE(rows[1]["resumed_at"], "");
  EXPECT_EQ(rows[1]["seconds"], "5.0") << "charged from the resume, not the fence change";
}

// A scripted incident at fixed times (2026-12-07, UTC): at 02:31:00 the fence
// of `agents` rolls to generation 2; "run", running, is suspended 500 ms
// later; "held", suspended by its user before the roll, is held, resumed by
// hand at 02:31:15 with its old fence annotations and suspended 2 ms after the
// resume was seen. The documented examples of the audit queries run on it.
std::string ScriptedIncident(const testing::TempDir& dir) {
  using std::chrono::milliseconds;
  ManualTimeSource clock(WallTime(std::chrono::seconds(1796610600)));  // 02:30:00Z
  journal::OpenOptions open;
  open.clock = &clock;
  auto j = journal::Journal::Open(dir.File("incident.db"), open);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  domain::Snapshot run = testing::HealthySnapshot("run");
  domain::Snapshot held = testing::HealthySnapshot("held");
  held.sandbox.should_run = false;  // suspended by its user
  held.workload_pod = held.supervisor_pod = {};
  const auto record = [&](domain::Snapshot& s, const std::string& rv) {
    s.observed_at_ms = clock.NowMs();
    auto r = (*j)->Record({s, domain::decide(s), rv});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (r.ok() && r->intent_seq) {
      clock.Advance(milliseconds(2));
      EXPECT_TRUE((*j)->RecordOutcome(*r->intent_seq, {domain::Outcome::kApplied, 9, ""}).ok());
    }
  };
  record(run, "1");
  record(held, "1");
  clock.Advance(milliseconds(60'000));  // 02:31:00Z: the roll, seen with held's next pass
  run.workload_fence.generation = held.workload_fence.generation = 2;
  record(held, "2");
  clock.Advance(milliseconds(500));
  record(run, "2");                     // the intent at 02:31:00.500Z, applied at .502
  clock.Advance(milliseconds(14'498));  // 02:31:15Z: held resumed by hand
  held.sandbox.should_run = true;
  held.sandbox.generation = 3;
  held.workload_pod = {true, "pod-held"};
  held.supervisor_pod = {true, "sup-held"};
  record(held, "3");
  return dir.File("incident.db");
}

// Issue 37: an offset in @from was compared as text, and the documented
// window printed nothing; now each time is normalized to UTC, and one that is
// not an RFC 3339 time stops the query with a message.
TEST(AuditWindow, TheDocumentedExampleAndOffsetsSelectTheRightTransitions) {
  testing::TempDir dir;
  const std::string journal = ScriptedIncident(dir);
  Printed documented = Shell(UsageCommand("transitions_in_window.sql", journal));
  ASSERT_EQ(documented.exit_code, 0) << documented.err;
  ASSERT_EQ(documented.rows.size(), 2u) << documented.out;
  EXPECT_EQ(documented.rows[0]["sandbox"], "run");
  EXPECT_EQ(documented.rows[0]["recorded_at"], "2026-12-07T02:31:00.500Z");
  EXPECT_EQ(documented.rows[1]["sandbox"], "held");
  // The same instant with an offset, and a bound inside the transitions.
  const auto window = [&](const std::string& from, const std::string& to) {
    return Audit(journal, "transitions_in_window.sql", {{"@from", from}, {"@to", to}});
  };
  EXPECT_EQ(window("2026-12-07T03:31:00.500+01:00", "2026-12-07T02:32:00Z").rows.size(), 2u);
  EXPECT_EQ(window("2026-12-07T03:31:00.501+01:00", "2026-12-07T02:32:00Z").rows.size(), 1u);
  EXPECT_EQ(window("2026-12-06T21:31:00-05:00", "2026-12-07T02:31:15Z").rows.size(), 1u);
  for (const std::string bad : {"yesterday", "2026-12-07", "2026-12-07T03:31:00+1"}) {
    const Printed p = window(bad, "2026-12-08T00:00:00Z");
    EXPECT_NE(p.exit_code, 0) << bad << ": " << p.out;
    EXPECT_NE(p.err.find("@from and @to must be RFC 3339 times"), std::string::npos) << p.err;
    EXPECT_EQ(p.out, "") << bad;
  }
}

// Issue 37: a sandbox its user suspended, held over a fence change, resumed by
// hand 15 s later and suspended 2 ms after the resume showed 15 s charged to
// the fence change; its episode began with the resume.
TEST(AuditEpisodes, AResumeOfAHeldSandboxBeginsItsEpisode) {
  testing::TempDir dir;
  auto rows = Audit(ScriptedIncident(dir), "fence_change_to_suspension.sql").rows;
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0]["sandbox"], "run");
  EXPECT_EQ(rows[0]["episode_began_with"], "fence change");
  EXPECT_EQ(rows[0]["seconds"], "0.502");
  EXPECT_EQ(rows[1]["sandbox"], "held");
  EXPECT_EQ(rows[1]["episode_began_with"], "resumed");
  EXPECT_EQ(rows[1]["resumed_at"], "2026-12-07T02:31:15.000Z");
  EXPECT_EQ(rows[1]["seconds"], "0.002");
}

}  // namespace
}  // namespace fk
