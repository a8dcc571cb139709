// `fencekeeper replay`, run in-process on the journal the demo leaves (and on
// hand-made hostile ones): the aligned text timeline with short UIDs and a
// legend, the filters and their row counts, --check (--quiet), exit codes,
// and the HTML page's escaping and self-containment.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>
#include <regex>
#include <sstream>

#include "cli/commands.h"
#include "cli/replay_describe.h"
#include "cli/replay_query.h"
#include "cli/replay_timeline.h"
#include "domain/fold.h"
#include "journal/archive.h"
#include "journal/journal.h"
#include "journal_fixture.h"
#include "test_support.h"

namespace fk::cli {
namespace {
using fk::testing::TempDir;

struct Outcome {
  int code = -1;
  std::string out, err;
};

Outcome Replay(const ReplayOptions& o) {
  std::ostringstream out, err;
  Outcome r;
  r.code = RunReplay(o, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// A journal written by the code: the demo's incident run.
std::string DemoJournal(const TempDir& dir) {
  std::ostringstream out, err;
  DemoOptions o;
  o.directory = dir.path().string();
  o.passes = 3;
  EXPECT_EQ(RunDemo(o, out, err), kExitOk) << err.str();
  return dir.File("journal.db");
}

// One demo run shared by the suite; a test that alters a journal alters a backup of it
// (CheckTampered).
class ReplayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    journal_ = new std::string(DemoJournal(*dir_));
  }
  static void TearDownTestSuite() {
    delete journal_;
    delete dir_;
  }

  ReplayOptions Options() const {
    ReplayOptions o;
    o.journals = {*journal_};
    return o;
  }
  int64_t Count(const std::string& where) const {
    SQLite::Database db(*journal_, SQLite::OPEN_READONLY);
    return db.execAndGet("SELECT count(*) FROM events WHERE " + where).getInt64();
  }
  std::string RecordedAt(int64_t seq) const {
    SQLite::Database db(*journal_, SQLite::OPEN_READONLY);
    return db.execAndGet("SELECT recorded_at FROM events WHERE seq = " + std::to_string(seq))
        .getString();
  }

  static TempDir* dir_;
  static std::string* journal_;
};
TempDir* ReplayTest::dir_ = nullptr;
std::string* ReplayTest::journal_ = nullptr;

// The timeline's lines: from the column header to the first blank line.
std::vector<std::string> TimelineLines(const std::string& out) {
  std::vector<std::string> lines;
  std::istringstream in(out);
  bool in_table = false;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("SEQ ", 0) == 0) in_table = true;
    if (in_table && line.empty()) break;
    if (in_table) lines.push_back(line);
  }
  return lines;
}

// "N of M rows shown" from the first line.
int64_t RowsShown(const std::string& out) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(out, m, std::regex(R"(, (\d+) of \d+ rows shown)"))) << out;
  return m.empty() ? -1 : std::stoll(m[1]);
}

TEST_F(ReplayTest, CheckPassesOnAJournalWrittenByTheCode) {
  ReplayOptions o = Options();
  o.check = true;
  Outcome r = Replay(o);
  EXPECT_EQ(r.code, kExitOk) << r.err << r.out;
  EXPECT_NE(r.out.find("integrity_check ok, 0 divergence(s)"), std::string::npos) << r.out;
  o.check = false;
  r = Replay(o);
  EXPECT_NE(r.out.find("suspend_intent"), std::string::npos);
  EXPECT_NE(r.out.find("verdict=hold reason=fence-stale"), std::string::npos);
}

// Alters one recorded decision the way an operator with sqlite3 could: the
// append-only trigger has to be dropped first. The decision is found through
// the `events` view and altered in the compact row holding it, whose body
// keeps it as $.d = [verdict, reason, action, ...] (integer codes).
int64_t TamperWithFirstDecision(const std::string& path, const std::string& verdict_sql_filter,
                                const std::string& json_path, int value) {
  SQLite::Database db(path, SQLite::OPEN_READWRITE);
  const int64_t seq =
      db.execAndGet("SELECT min(seq) FROM events WHERE kind = 'decided' AND " + verdict_sql_filter)
          .getInt64();
  db.exec("DROP TRIGGER journal_append_only_update");
  db.exec("UPDATE journal SET body = json_set(body, '" + json_path + "', " + std::to_string(value) +
          ") WHERE seq = (SELECT max(seq) FROM journal WHERE seq <= " + std::to_string(seq) + ")");
  return seq;
}

// replay --check (quiet or not) on a copy of the demo journal with one decision altered.
struct Tampered {
  int64_t seq = 0;
  Outcome loud, quiet;
};
Tampered CheckTampered(const ReplayOptions& base, const std::string& filter,
                       const std::string& json_path, int value) {
  TempDir dir;
  ReplayOptions o = base;
  o.journals = {dir.File("copy.db")};
  std::ostringstream out, err;
  EXPECT_EQ(RunBackup(base.journals[0], o.journals[0], out, err), kExitOk) << err.str();
  Tampered t;
  t.seq = TamperWithFirstDecision(o.journals[0], filter, json_path, value);
  o.check = true;
  t.loud = Replay(o);
  o.quiet = true;
  t.quiet = Replay(o);
  // Without --check the timeline still prints and succeeds.
  o.check = o.quiet = false;
  EXPECT_EQ(Replay(o).code, kExitOk);
  return t;
}

// Issue 17: the timeline names each intent's writer id, as the transitions view does.
TEST_F(ReplayTest, IntentRowsNameTheirWriter) {
  SQLite::Database db(*journal_, SQLite::OPEN_READONLY);
  const std::string writer =
      db.execAndGet("SELECT writer FROM transitions ORDER BY seq LIMIT 1").getString();
  ASSERT_EQ(writer.size(), 32u);  // the demo's run drew one
  const Outcome r = Replay(Options());
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("writer=" + writer), std::string::npos) << r.out;
}

TEST_F(ReplayTest, CheckFailsNamingTheSeqOfAnAlteredDecision) {
  const Tampered t = CheckTampered(Options(), "json_extract(payload, '$.verdict') = 'hold'",
                                   "$.d[0]", 3);  // healthy
  EXPECT_EQ(t.loud.code, kExitCheckFailed);
  const std::string at = "divergence at seq " + std::to_string(t.seq);
  EXPECT_NE(t.loud.err.find(at), std::string::npos) << t.loud.err;
  EXPECT_NE(t.loud.err.find("recorded decision healthy/fence-stale/none"), std::string::npos)
      << t.loud.err;
  // Quiet: the verdict line alone on stdout, the divergences on stderr, the same exit code.
  EXPECT_EQ(t.quiet.code, kExitCheckFailed);
  EXPECT_EQ(std::count(t.quiet.out.begin(), t.quiet.out.end(), '\n'), 1) << t.quiet.out;
  EXPECT_EQ(t.quiet.out.find(" 0 divergence(s)"), std::string::npos) << t.quiet.out;
  EXPECT_NE(t.quiet.err.find(at), std::string::npos);
}

TEST_F(ReplayTest, CheckCatchesAnAlteredAction) {
  const Tampered t = CheckTampered(Options(), "json_extract(payload, '$.action') = 'patch-suspend'",
                                   "$.d[2]", 0);  // none
  EXPECT_EQ(t.loud.code, kExitCheckFailed);
  EXPECT_NE(t.loud.err.find("seq " + std::to_string(t.seq)), std::string::npos) << t.loud.err;
}

// Issue 37: --check without --quiet printed the whole timeline before its
// verdict; it prints the verdict line, as --quiet always did.
TEST_F(ReplayTest, CheckPrintsExactlyTheVerdictLineQuietOrNot) {
  for (const bool quiet : {true, false}) {
    ReplayOptions o = Options();
    o.check = true;
    o.quiet = quiet;
    Outcome r = Replay(o);
    EXPECT_EQ(r.code, kExitOk) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_TRUE(std::regex_match(
        r.out,
        std::regex(
            R"(check: \d+ events, \d+ decisions re-run, integrity_check ok, 0 divergence\(s\)\n)")))
        << "quiet " << quiet << ": " << r.out;
  }
}

TEST_F(ReplayTest, ColumnsLineUpOnEveryRow) {
  Outcome r = Replay(Options());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto lines = TimelineLines(r.out);
  ASSERT_EQ(static_cast<int64_t>(lines.size()), Count("1") + 1) << r.out;  // + the header
  const std::string& header = lines.front();
  for (const char* column : {"TIME", "EVENT", "SUBJECT", "UID", "DETAILS"}) {
    const size_t at = header.find(std::string("  ") + column);
    ASSERT_NE(at, std::string::npos) << column;
    const size_t start = at + 2;
    for (const auto& line : lines) {
      ASSERT_GT(line.size(), start) << line;
      EXPECT_EQ(line[start - 1], ' ') << column << " in: " << line;
      EXPECT_NE(line[start], ' ') << column << " in: " << line;
    }
  }
}

TEST_F(ReplayTest, TextShowsShortUidsAndJsonWholeOnes) {
  Outcome text = Replay(Options());
  ASSERT_EQ(text.code, kExitOk);
  const std::regex whole_uid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  EXPECT_FALSE(std::regex_search(text.out, whole_uid)) << text.out;
  SQLite::Database db(*journal_, SQLite::OPEN_READONLY);
  const std::string uid =
      db.execAndGet("SELECT uid FROM events WHERE name = 'active-1' LIMIT 1").getString();
  ASSERT_EQ(uid.size(), 36u);
  EXPECT_NE(text.out.find("  " + uid.substr(0, kShortUidLength) + "  "), std::string::npos);
  ReplayOptions o = Options();
  o.json = true;
  EXPECT_NE(Replay(o).out.find("\"" + uid + "\""), std::string::npos);
}

TEST_F(ReplayTest, LegendExplainsEveryAbbreviation) {
  Outcome r = Replay(Options());
  const size_t legend = r.out.find("\nlegend:\n");
  ASSERT_NE(legend, std::string::npos) << r.out;
  for (const auto& entry : Legend()) {
    const size_t at = r.out.find("\n  " + entry.term + "  ", legend);
    EXPECT_NE(at, std::string::npos) << entry.term;
    if (at != std::string::npos) {
      EXPECT_EQ(r.out.substr(r.out.find_first_not_of(' ', at + 3 + entry.term.size()),
                             entry.meaning.size()),
                entry.meaning);
    }
  }
  EXPECT_NE(r.out.find("pods=WS"), std::string::npos);
  EXPECT_NE(r.out.find("W: the workload pod exists; S: the supervisor pod exists"),
            std::string::npos);
}

TEST_F(ReplayTest, SandboxFilterKeepsItsNamespacesFenceRowsAsContext) {
  ReplayOptions o = Options();
  o.sandboxes = {"openshell-agents/active-1"};
  Outcome text = Replay(o);
  ASSERT_EQ(text.code, kExitOk) << text.err;
  EXPECT_EQ(RowsShown(text.out),
            Count("name = 'active-1' OR (kind = 'fence_observed' AND namespace = "
                  "'openshell-agents')"));
  EXPECT_EQ(text.out.find("active-2"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find("team-healthy"), std::string::npos);
  o.sandboxes.push_back("team-healthy/healthy-2");  // repeatable: either one
  EXPECT_EQ(RowsShown(Replay(o).out),
            Count("name IN ('active-1', 'healthy-2') OR kind = 'fence_observed'"));
}

TEST_F(ReplayTest, NamespaceFilterCountsItsRows) {
  ReplayOptions o = Options();
  o.namespaces = {"team-healthy"};
  Outcome r = Replay(o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(RowsShown(r.out), Count("namespace = 'team-healthy'"));
  EXPECT_EQ(r.out.find("openshell-agents/"), std::string::npos) << r.out;
  o.namespaces.push_back("openshell-agents");
  EXPECT_EQ(RowsShown(Replay(o).out), Count("1"));
}

TEST_F(ReplayTest, SinceAndUntilTakeSeqsTimesAndDurations) {
  ReplayOptions o = Options();
  o.since = "29";
  EXPECT_EQ(RowsShown(Replay(o).out), Count("seq >= 29"));
  o.until = "36";
  Outcome window = Replay(o);
  EXPECT_EQ(RowsShown(window.out), 8);
  EXPECT_NE(window.out.find("state after seq 36:"), std::string::npos) << window.out;

  const std::string t = RecordedAt(29);
  o = Options();
  o.since = t;
  EXPECT_EQ(RowsShown(Replay(o).out), Count("recorded_at >= '" + t + "'"));
  o.since.reset();
  o.until = t;
  EXPECT_EQ(RowsShown(Replay(o).out), Count("recorded_at <= '" + t + "'"));
  // A duration counts back from the last row.
  o.until.reset();
  o.since = "0s";
  EXPECT_EQ(RowsShown(Replay(o).out), Count("recorded_at = (SELECT max(recorded_at) FROM events)"));
  o.since = "1h";
  EXPECT_EQ(RowsShown(Replay(o).out), Count("1"));
}

TEST(ReplayTime, ParsesRfc3339WithFractionsAndOffsets) {
  const auto utc = ParseTimeMs("2026-12-01T10:00:00Z");
  ASSERT_TRUE(utc);
  EXPECT_EQ(*utc, 1796119200000);
  EXPECT_EQ(ParseTimeMs("2026-12-01T11:00:00+01:00"), utc);
  EXPECT_EQ(ParseTimeMs("2026-12-01T09:30:00-00:30"), utc);
  EXPECT_EQ(ParseTimeMs("2026-12-01T10:00:00.25Z"), *utc + 250);
  for (const char* bad : {"2026-12-01", "2026-12-01 10:00:00Z", "2026-13-01T10:00:00Z",
                          "2026-12-01T10:00:00", "2026-12-01T10:00:00+1:00", "yesterday"})
    EXPECT_FALSE(ParseTimeMs(bad)) << bad;
}

TEST_F(ReplayTest, FiltersThatMatchNothingExitThreeWithAMessage) {
  ReplayOptions o = Options();
  o.sandboxes = {"nope/nope"};
  Outcome unknown = Replay(o);
  EXPECT_EQ(unknown.code, kExitNoRows);
  EXPECT_EQ(unknown.out, "");
  EXPECT_NE(unknown.err.find("no row names sandbox nope/nope"), std::string::npos) << unknown.err;
  // A typo in a known namespace: the message names what the journal does know there.
  o.sandboxes = {"openshell-agents/active-9"};
  Outcome typo = Replay(o);
  EXPECT_EQ(typo.code, kExitNoRows);
  EXPECT_NE(typo.err.find("openshell-agents/active-1"), std::string::npos) << typo.err;
  o.sandboxes.clear();
  o.namespaces = {"team-healthy", "team-typo"};  // one unknown is enough to say so
  Outcome ns = Replay(o);
  EXPECT_EQ(ns.code, kExitNoRows);
  EXPECT_NE(ns.err.find("no row names namespace team-typo"), std::string::npos) << ns.err;
  o = Options();
  o.since = std::to_string(Count("1") + 1);
  Outcome empty = Replay(o);
  EXPECT_EQ(empty.code, kExitNoRows);
  EXPECT_NE(empty.err.find("no row matches the filters between --since and --until"),
            std::string::npos);
}

TEST_F(ReplayTest, MalformedBoundsAndNamesAreUsageErrors) {
  for (const char* bad : {"yesterday", "-3", "2026-12-01T10:00"}) {
    ReplayOptions o = Options();
    o.since = bad;
    Outcome r = Replay(o);
    EXPECT_EQ(r.code, kExitUnusable) << bad;
    EXPECT_NE(r.err.find("--since takes a seq"), std::string::npos) << r.err;
  }
  ReplayOptions o = Options();
  o.sandboxes = {"no-slash"};
  EXPECT_EQ(Replay(o).code, kExitUnusable);
}

TEST(ReplayCommand, UnusableJournalsExitTwoAndStayAbsentOrUntouched) {
  TempDir dir;
  ReplayOptions o;
  o.journals = {dir.File("missing.db")};
  Outcome missing = Replay(o);
  EXPECT_EQ(missing.code, kExitUnusable);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(o.journals[0]));

  o.journals = {dir.File("foreign.db")};
  testing::WriteBytes(o.journals[0], "SQLite format 3");  // truncated header
  EXPECT_EQ(Replay(o).code, kExitUnusable);
  EXPECT_EQ(testing::ReadBytes(o.journals[0]), "SQLite format 3");
}

TEST_F(ReplayTest, JsonHonoursUntilAndCheck) {
  ReplayOptions o = Options();
  o.until = "5";
  o.json = true;
  o.check = true;
  Outcome json = Replay(o);
  ASSERT_EQ(json.code, kExitOk) << json.err;
  EXPECT_NE(json.out.find("\"last_seq\":5,"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"seq\":5,"), std::string::npos);
  EXPECT_EQ(json.out.find("\"seq\":6,"), std::string::npos);
  EXPECT_NE(json.out.find("\"ok\":true"), std::string::npos);
}

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(ReplayTest, HtmlPageIsSelfContainedAndHasARowPerEvent) {
  TempDir dir;
  ReplayOptions o = Options();
  o.html = dir.File("incident.html");
  Outcome r = Replay(o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("wrote " + *o.html), std::string::npos);
  const std::string page = testing::ReadBytes(*o.html);
  for (const char* outside : {"http:", "https:", "src=", "<link", "@import", "url(", "//cdn"})
    EXPECT_EQ(page.find(outside), std::string::npos) << outside;
  EXPECT_EQ(Occurrences(page, "<script"), 2u);  // the data, and the inline drawing script
  EXPECT_EQ(static_cast<int64_t>(Occurrences(page, "<tr id=\"row-")), Count("1"));
  EXPECT_NE(page.find("id=\"fk-lanes\""), std::string::npos);
  EXPECT_NE(page.find("pods=WS"), std::string::npos);  // the legend of the details column
}

// Names come from the API server and notes from error messages: the page
// must show them as text, never run or load them.
TEST(ReplayHtml, EscapesHostileJournalText) {
  TempDir dir;
  const std::string path = dir.File("hostile.db");
  const std::string name = "</script><img src=x onerror=alert(1)>";
  {
    auto j = journal::Journal::Open(path);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    domain::Snapshot s = testing::HealthySnapshot(name, "ns\"'&<u>");
    domain::Event observed;
    observed.ns = s.sandbox.ns;
    observed.name = name;
    observed.uid = s.sandbox.uid;
    observed.body = domain::SandboxObserved{s};
    domain::Decision d = domain::decide(s);
    d.note = "</script><script>alert(2)</script> \xE2\x80\xA8 see https://evil.example/x.js";
    domain::Event decided = observed;
    decided.body = domain::Decided{d};
    ASSERT_TRUE((*j)->Append({observed, decided}).ok());
  }
  ReplayOptions o;
  o.journals = {path};
  o.html = dir.File("page.html");
  Outcome r = Replay(o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string page = testing::ReadBytes(*o.html);
  EXPECT_EQ(Occurrences(page, "<script"), 2u);
  EXPECT_EQ(Occurrences(page, "</script>"), 2u);
  EXPECT_EQ(page.find("<img"), std::string::npos);
  EXPECT_EQ(page.find("<u>"), std::string::npos);
  // The table: HTML-escaped text.
  EXPECT_NE(page.find("&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;"), std::string::npos);
  EXPECT_NE(page.find("ns&quot;&#39;&amp;&lt;u&gt;/"), std::string::npos);
  // The data: JSON whose strings cannot end the script element.
  const std::string data = page.substr(page.find("id=\"fk-data\""));
  EXPECT_NE(data.find("\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e"),
            std::string::npos);
  EXPECT_NE(data.find("\\u2028"), std::string::npos);
  EXPECT_EQ(data.find("\xE2\x80\xA8"), std::string::npos);
}

// Two replicas' journals (issue 19): fencekeeper-0 leads from t=0 and
// suspends sb-a at t=10s; fencekeeper-1 takes over and writes from t=5s on,
// suspending sb-b at t=12s. Each journal's clock is its own ManualTimeSource.
class TwoJournals : public ::testing::Test {
 protected:
  static constexpr const char* kWriterA = "aaaaaaaa000000000000000000000000";
  static constexpr const char* kWriterB = "bbbbbbbb000000000000000000000000";

  void SetUp() override {
    ManualTimeSource a_clock, b_clock;
    b_clock.Advance(std::chrono::seconds(5));
    auto a = OpenWith(a_, a_clock);
    auto b = OpenWith(b_, b_clock);
    Healthy(*a, "sb-a");
    Healthy(*b, "sb-b");
    a_clock.Advance(std::chrono::seconds(10));
    Suspend(*a, a_clock, "sb-a", kWriterA);
    b_clock.Advance(std::chrono::seconds(7));
    Suspend(*b, b_clock, "sb-b", kWriterB);
  }
  static std::unique_ptr<journal::Journal> OpenWith(const std::string& path,
                                                    ManualTimeSource& clock) {
    journal::OpenOptions o;
    o.clock = &clock;
    auto j = journal::Journal::Open(path, o);
    EXPECT_TRUE(j.ok()) << j.status().ToString();
    return std::move(*j);
  }
  static void Healthy(journal::Journal& j, const std::string& name) {
    domain::Snapshot s = testing::HealthySnapshot(name);
    ASSERT_TRUE(j.Record({s, domain::decide(s), "1"}).ok());
  }
  // Observation, decision and intent now; the outcome 1 s later.
  static void Suspend(journal::Journal& j, ManualTimeSource& clock, const std::string& name,
                      const std::string& writer) {
    domain::Snapshot s = testing::StaleSnapshot(name);
    s.history = domain::history_for(j.state(), s.sandbox.uid);
    auto r = j.Record({s, domain::decide(s), "2", writer});
    ASSERT_TRUE(r.ok() && r->intent_seq) << r.status().ToString();
    clock.Advance(std::chrono::seconds(1));
    ASSERT_TRUE(j.RecordOutcome(*r->intent_seq, {domain::Outcome::kApplied, 3, ""}).ok());
  }
  ReplayOptions Both() const {
    ReplayOptions o;
    o.journals = {a_, b_};
    return o;
  }

  TempDir dir_;
  const std::string a_ = dir_.File("fencekeeper-0.db"), b_ = dir_.File("fencekeeper-1.db");
};

// The merged timeline's rows: "time journal writer seq event" each.
std::vector<std::string> MergedRows(const std::string& out) {
  std::vector<std::string> got;
  std::istringstream lines(out.substr(out.find("\nTIME ") + 1));
  std::string line;
  std::getline(lines, line);  // the column header
  while (std::getline(lines, line) && !line.empty()) {
    std::istringstream cells(line);
    std::string time, journal, writer, seq, event;
    cells >> time >> journal >> writer >> seq >> event;
    std::ostringstream row;
    row << time.substr(11, 8) << " " << journal << " " << writer << " " << seq << " " << event;
    got.push_back(row.str());
  }
  return got;
}

TEST_F(TwoJournals, OneTimelineInTimeOrderEachRowNamingItsJournalAndWriter) {
  const Outcome r = Replay(Both());
  ASSERT_EQ(r.code, kExitOk) << r.err;
  // time, journal, writer, seq, event, subject
  const std::vector<std::string> got = MergedRows(r.out);
  const std::vector<std::string> want = {
      // clang-format off
      "00:00:00 fencekeeper-0.db - 1 fence_observed",
      "00:00:00 fencekeeper-0.db - 2 fence_observed",
      "00:00:00 fencekeeper-0.db - 3 sandbox_observed",
      "00:00:00 fencekeeper-0.db - 4 decided",
      "00:00:05 fencekeeper-1.db - 1 fence_observed",
      "00:00:05 fencekeeper-1.db - 2 fence_observed",
      "00:00:05 fencekeeper-1.db - 3 sandbox_observed",
      "00:00:05 fencekeeper-1.db - 4 decided",
      "00:00:10 fencekeeper-0.db - 5 fence_observed",
      "00:00:10 fencekeeper-0.db - 6 sandbox_observed",
      "00:00:10 fencekeeper-0.db - 7 decided",
      "00:00:10 fencekeeper-0.db aaaaaaaa 8 suspend_intent",
      "00:00:11 fencekeeper-0.db - 9 suspend_outcome",
      "00:00:12 fencekeeper-1.db - 5 fence_observed",
      "00:00:12 fencekeeper-1.db - 6 sandbox_observed",
      "00:00:12 fencekeeper-1.db - 7 decided",
      "00:00:12 fencekeeper-1.db bbbbbbbb 8 suspend_intent",
      "00:00:13 fencekeeper-1.db - 9 suspend_outcome",
      // clang-format on
  };
  EXPECT_EQ(got, want) << r.out;
  EXPECT_NE(r.out.find("2 journals, 18 of 18 rows shown, in time order"), std::string::npos);
  EXPECT_NE(r.out.find("state of fencekeeper-0.db after seq 9:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("state of fencekeeper-1.db after seq 9:"), std::string::npos);
  EXPECT_NE(r.out.find("  writer "), std::string::npos) << "the legend explains the column";
}

TEST(ReplayTimeline, TiesGoByJournalThenSeqAndAWriterIsKnownBetweenItsIntents) {
  ReplayReport a, b;
  a.rows.resize(2);
  b.rows.resize(1);
  for (auto* r : {&a, &b})
    for (size_t i = 0; i < r->rows.size(); ++i) {
      r->rows[i].seq = static_cast<int64_t>(i + 1);
      r->rows[i].recorded_at = "2026-12-01T10:00:00Z";
    }
  Timeline t;
  t.journals.resize(2);
  t.journals[0].report = b;  // index 0 is the tie's winner, whatever its content
  t.journals[1].report = a;
  Merge(t);
  ASSERT_EQ(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0].journal, 0u);
  EXPECT_EQ(t.rows[1].journal, 1u);
  EXPECT_EQ(t.rows[1].event->seq, 1);
  EXPECT_EQ(t.rows[2].event->seq, 2);

  ReplayReport r;
  r.intent_writers = {{10, "w1"}, {20, "w1"}, {30, "w2"}};
  domain::Event e;
  e.seq = 15;
  EXPECT_EQ(WriterOf(r, e), "w1");  // between two intents of w1
  e.seq = 25;
  EXPECT_EQ(WriterOf(r, e), "") << "a restart may lie between w1's last and w2's first intent";
  e.seq = 5;
  EXPECT_EQ(WriterOf(r, e), "");
  e.seq = 35;
  EXPECT_EQ(WriterOf(r, e), "");
  r.writer_starts = {{12, "s1"}, {30, "s2"}};  // recorded starts (schema 8) say, where they cover
  e.seq = 25;
  EXPECT_EQ(WriterOf(r, e), "s1");
  e.seq = 35;
  EXPECT_EQ(WriterOf(r, e), "s2");
  e.seq = 11;
  EXPECT_EQ(WriterOf(r, e), "w1") << "before the first recorded start: inferred from intents";
  EXPECT_EQ(JournalLabels({"/a/journal.db", "/b/journal.db", "/c/x.db"}),
            (std::vector<std::string>{"/a/journal.db", "/b/journal.db", "x.db"}));
}

// Journals of schema 8 record each start of `run`: every row names its
// writer, also rows no intent brackets (a writer that suspended nothing), and
// an intent that names another writer keeps its own.
TEST_F(TwoJournals, RecordedStartsNameTheWriterOfEveryRow) {
  const std::string w1(32, '1'), w2(32, '2'), w3(32, '3'), w4(32, '4'), other(32, 'f');
  const std::string c = dir_.File("replica-0.db"), d = dir_.File("replica-1.db");
  ManualTimeSource c_clock, d_clock;
  int64_t w2_first = 0, w3_first = 0;
  {
    auto j = OpenWith(c, c_clock);
    ASSERT_TRUE(j->RecordWriterStart(w1).ok());
    Healthy(*j, "sb-a");
    Suspend(*j, c_clock, "sb-a", w1);
  }
  {
    auto j = OpenWith(c, c_clock);  // a restart: a new writer id
    w2_first = j->state().last_seq + 1;
    ASSERT_TRUE(j->RecordWriterStart(w2).ok());
    Healthy(*j, "sb-c");
  }
  {
    auto j = OpenWith(c, c_clock);
    w3_first = j->state().last_seq + 1;
    ASSERT_TRUE(j->RecordWriterStart(w3).ok());
    Healthy(*j, "sb-d");
    Suspend(*j, c_clock, "sb-d", other);  // disagrees with the table: its own id shows
  }
  {
    d_clock.Advance(std::chrono::seconds(1));
    auto j = OpenWith(d, d_clock);
    ASSERT_TRUE(j->RecordWriterStart(w4).ok());
    Healthy(*j, "sb-b");
  }
  ReplayOptions o;
  o.journals = {c, d};
  const Outcome r = Replay(o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto rows = MergedRows(r.out);
  ASSERT_GT(rows.size(), 12u) << r.out;
  size_t intents = 0;
  for (const auto& row : rows) {
    std::istringstream cells(row);
    std::string time, journal, writer, event;
    int64_t seq = 0;
    cells >> time >> journal >> writer >> seq >> event;
    std::string want = w4;
    if (journal == "replica-0.db") want = seq < w2_first ? w1 : seq < w3_first ? w2 : w3;
    if (event == "suspend_intent" && seq >= w3_first) want = other, ++intents;
    EXPECT_EQ(writer, want.substr(0, 8)) << row << "\n" << r.out;
  }
  EXPECT_EQ(intents, 1u);
  o.json = true;
  const Outcome json = Replay(o);
  ASSERT_EQ(json.code, kExitOk) << json.err;
  EXPECT_EQ(Occurrences(json.out, "\"writer\":\"\""), 0u) << json.out;
  EXPECT_GT(Occurrences(json.out, "\"writer\":\"" + w2 + "\""), 0u) << json.out;
}

TEST_F(TwoJournals, JsonRowsCarryTheirJournalAndWholeWriter) {
  ReplayOptions o = Both();
  o.json = true;
  o.check = true;
  const Outcome r = Replay(o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(Occurrences(r.out, "\"journal\":\"fencekeeper-0.db\""), 9u) << r.out;
  EXPECT_EQ(Occurrences(r.out, "\"journal\":\"fencekeeper-1.db\""), 9u);
  EXPECT_EQ(Occurrences(r.out, std::string("\"writer\":\"") + kWriterA + "\""), 2u)
      << "its intent, and the intent's own writer field";
  EXPECT_EQ(Occurrences(r.out, "\"label\":"), 2u);
  EXPECT_EQ(Occurrences(r.out, "\"ok\":true"), 2u) << "each journal checked on its own";
}

TEST_F(TwoJournals, SeqBoundsAreRefusedTimesAndDurationsFilterEveryJournal) {
  ReplayOptions o = Both();
  o.since = "5";
  Outcome r = Replay(o);
  EXPECT_EQ(r.code, kExitUnusable);
  EXPECT_NE(r.err.find("--since 5: a seq names a row of one journal only"), std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
  o.since = "3s";  // before the latest last row (t=13s): t >= 10s
  r = Replay(o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("2 journals, 10 of 18 rows shown"), std::string::npos) << r.out;
}

TEST_F(TwoJournals, ABadFileIsNamedAndNothingIsPrinted) {
  ReplayOptions o = Both();
  o.journals.push_back(dir_.File("missing.db"));
  Outcome r = Replay(o);
  EXPECT_EQ(r.code, kExitUnusable);
  EXPECT_NE(r.err.find("missing.db"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
  o.journals = {a_, b_, a_};
  r = Replay(o);
  EXPECT_EQ(r.code, kExitUnusable);
  EXPECT_NE(r.err.find("is the same file as"), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

TEST_F(TwoJournals, CheckChecksEachAndNamesTheOneThatFailed) {
  TamperWithFirstDecision(b_, "json_extract(payload, '$.verdict') = 'suspend'", "$.d[0]", 0);
  ReplayOptions o = Both();
  o.check = true;
  o.quiet = true;
  const Outcome r = Replay(o);
  EXPECT_EQ(r.code, kExitCheckFailed);
  EXPECT_NE(r.out.find("fencekeeper-0.db: check: 9 events"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fencekeeper-0.db: check: 9 events, 2 decisions re-run, integrity_check "
                       "ok, 0 divergence(s)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("fencekeeper-1.db: check: 9 events, 2 decisions re-run, integrity_check "
                       "ok, 2 divergence(s)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("fencekeeper replay --check: fencekeeper-1.db: divergence at seq 7"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("fencekeeper-1.db (" + b_ + ") failed"), std::string::npos);
  EXPECT_EQ(r.err.find("fencekeeper-0.db ("), std::string::npos) << "only the one that failed";
}

TEST_F(TwoJournals, HtmlMarksEachRowsJournalAndRefusesToOverwrite) {
  ReplayOptions o = Both();
  o.html = dir_.File("takeover.html");
  testing::WriteBytes(*o.html, "keep me");
  Outcome r = Replay(o);
  EXPECT_EQ(r.code, kExitUnusable);
  EXPECT_NE(r.err.find("takeover.html exists; give another file, or --force"), std::string::npos)
      << r.err;
  EXPECT_EQ(testing::ReadBytes(*o.html), "keep me");
  o.force = true;
  r = Replay(o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string page = testing::ReadBytes(*o.html);
  EXPECT_EQ(Occurrences(page, "<td data-journal=\"0\">fencekeeper-0.db</td>"), 9u);
  EXPECT_EQ(Occurrences(page, "<td data-journal=\"1\">fencekeeper-1.db</td>"), 9u);
  EXPECT_NE(page.find("<tr id=\"row-1-9\""), std::string::npos) << "row ids stay unique";
  EXPECT_NE(page.find("id=\"fk-journals\""), std::string::npos);
  EXPECT_NE(page.find("\"merged\":true"), std::string::npos);
}

// An archive file written by retention is a journal too: with the journal it
// was pruned from, the timeline holds every row once, and each checks.
TEST(ReplayArchive, AnArchiveFileAndItsJournalMakeOneTimeline) {
  TempDir dir;
  ManualTimeSource clock(std::chrono::system_clock::from_time_t(1'800'000'000));
  const std::string path = dir.File("journal.db"), archive = dir.File("archive");
  std::filesystem::create_directory(archive);
  {
    auto j = testing::OpenJournal(path, &clock);
    for (int i = 0; i < 3; ++i) {
      domain::Snapshot s = testing::HealthySnapshot("sb-" + std::to_string(i));
      ASSERT_TRUE(j->Record({s, domain::decide(s), "1"}).ok());
      ASSERT_TRUE(j->Forget(s.sandbox.uid, "deleted").ok());
      clock.Advance(std::chrono::seconds(1));
    }
    journal::PruneOptions p;
    p.cutoff_ms = 1'800'000'001'500;  // the first two lifecycles
    p.archive_dir = archive;
    ASSERT_TRUE(j->Prune(p).ok());
  }
  auto files = journal::ListArchives(archive);
  ASSERT_TRUE(files.ok() && files->size() == 1u);
  ReplayOptions o;
  o.journals = {files->front(), path};
  o.json = true;
  o.check = true;
  const Outcome r = Replay(o);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(Occurrences(r.out, "\"name\":\"sb-" + std::to_string(i) + "\""), 4u)
        << "observed (row and snapshot), decided, forgotten: once each";
  EXPECT_EQ(Occurrences(r.out, "\"ok\":true"), 2u) << r.out;
}

TEST(JournalVerifyMany, EachIsVerifiedEveryLineNamesItsJournalTheWorstCodeWins) {
  TempDir dir;
  const std::string a = dir.File("a.db"), b = dir.File("b.db");
  for (const auto& p : {a, b}) {
    auto j = journal::Journal::Open(p);
    ASSERT_TRUE(j.ok());
    domain::Snapshot s = testing::HealthySnapshot();
    ASSERT_TRUE((*j)->Record({s, domain::decide(s), "1"}).ok());
  }
  std::ostringstream out, err;
  ASSERT_EQ(RunJournalVerify(std::vector<VerifyOptions>{{a, {}, {}}, {b, {}, {}}}, out, err),
            kExitOk)
      << err.str();
  EXPECT_NE(out.str().find(a + ": head "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find(b + ": head "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("verified 2 journals: each ok"), std::string::npos);
  TamperWithFirstDecision(b, "1", "$.d[0]", 0);  // the chain breaks
  std::ostringstream out2, err2;
  const int rc = RunJournalVerify(
      std::vector<VerifyOptions>{{a, {}, {}}, {b, {}, {}}, {dir.File("none.db"), {}, {}}}, out2,
      err2);
  EXPECT_EQ(rc, kExitUnusable) << "the worst: a missing file";
  EXPECT_NE(out2.str().find(a + ": head "), std::string::npos) << "the good one still verified";
  EXPECT_NE(err2.str().find("fencekeeper journal verify: " + b + ": mismatch"), std::string::npos)
      << err2.str();
  EXPECT_NE(err2.str().find("fencekeeper journal verify: " + dir.File("none.db") + ": "),
            std::string::npos)
      << err2.str();
  EXPECT_NE(err2.str().find("not verified: " + b + ", " + dir.File("none.db")), std::string::npos);
}

// The command line: an --archive belongs to the --journal before it (to the
// first when it comes before any).
TEST(JournalVerifyMany, AnArchiveBelongsToTheJournalBeforeIt) {
  TempDir dir;
  const std::string a = dir.File("a.db"), b = dir.File("b.db"), none = dir.File("no-archive");
  for (const auto& p : {a, b}) ASSERT_TRUE(journal::Journal::Open(p).ok());
  const auto verify = [](const std::string& args) {
    return testing::RunShell(std::string(FK_BINARY) + " journal verify " + args + " 2>&1");
  };
  auto r = verify("--journal " + a + " --journal " + b + " --archive " + none);
  EXPECT_EQ(r.exit_code, kExitUnusable) << r.out;
  EXPECT_NE(r.out.find(a + ": head "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fencekeeper journal verify: " + b + ": "), std::string::npos) << r.out;
  r = verify("--archive " + none + " --journal " + a + " --journal " + b);
  EXPECT_EQ(r.exit_code, kExitUnusable) << r.out;
  EXPECT_NE(r.out.find(b + ": head "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fencekeeper journal verify: " + a + ": "), std::string::npos) << r.out;
  r = verify("--journal " + a + " --archive " + none + " --archive " + none);
  EXPECT_EQ(r.exit_code, kExitUnusable) << r.out;
  EXPECT_NE(r.out.find("--archive: given twice for " + a), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fk::cli
