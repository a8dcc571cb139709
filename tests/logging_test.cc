// Structured logging (issue 11): each record's fields are JSON keys or logfmt
// pairs, never text buried in the message; start-up failures come out in the
// chosen format; debug says each reconcile's verdict and trace each API
// request; no record carries a control character (issue 9, newline
// injection) or a bearer token.
#include "cli/logging.h"
#include "journal/journal.h"

#include "cli/commands.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "common/log.h"
#include "fake_transport.h"
#include "in_process_cluster.h"
#include "kube/objects.h"
#include "map_cache.h"
#include "reconciler/sandbox_reconciler.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "test_support.h"

namespace fk {
namespace {
namespace json = boost::json;
using log::Level;

// A name an attacker chose: a forged second log line, a terminal colour
// code, an 8-bit CSI, a C1 control as UTF-8, a NUL, invalid UTF-8, a DEL.
const std::string kHostile = std::string("sb\n2026-01-01T00:00:00.000Z warn forged\r\x1b[31mred") +
                             "\x9b" + "2J" + "\xC2\x85" + std::string(1, '\0') + "\xFF\xFE" +
                             "\x7F" + "caf\xC3\xA9";

// The bytes the logger that SetUpLogging configures writes for one transition's record.
std::string LogThrough(const std::string& format, const std::string& sandbox) {
  log::Capture restore;  // puts the previous logger back
  std::FILE* out = std::tmpfile();
  EXPECT_TRUE(cli::SetUpLogging(format, "info", out).ok());
  {
    const log::Scope scope({{"controller", std::string("sandbox")}, {"reconcile_id", "r7"}});
    log::Warn("fail-closed: suspended sandbox")
        .Namespace("openshell-agents")
        .Sandbox(sandbox)
        .Uid("u-1")
        .Reason("fence-stale")
        .Seq(33)
        .Int(log::key::kFenceFrom, 1)
        .Int(log::key::kFenceTo, 2)
        .Error("a \"quoted\" k=v\\path");
  }
  std::fflush(out);
  std::string bytes;
  std::rewind(out);
  for (int c; (c = std::fgetc(out)) != EOF;) bytes += static_cast<char>(c);
  std::fclose(out);
  return bytes;
}

bool HasControlBytes(const std::string& line) {
  return std::any_of(line.begin(), line.end() - 1, [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return c < 0x20 || c == 0x7F;
  });
}

// A logfmt reader (go-logfmt's rules): key=value pairs separated by spaces;
// a quoted value ends at the next unescaped quote, \" and \\ inside it.
std::vector<std::pair<std::string, std::string>> ParseLogfmt(const std::string& line) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t i = 0;
  while (i < line.size() && line[i] != '\n') {
    const size_t eq = line.find('=', i);
    EXPECT_NE(eq, std::string::npos) << line.substr(i);
    if (eq == std::string::npos) break;
    std::string key = line.substr(i, eq - i), value;
    i = eq + 1;
    if (i < line.size() && line[i] == '"') {
      for (++i; i < line.size() && line[i] != '"'; ++i) {
        if (line[i] == '\\') ++i;
        value += line[i];
      }
      ++i;  // the closing quote
    } else {
      while (i < line.size() && line[i] != ' ' && line[i] != '\n') value += line[i++];
    }
    out.emplace_back(std::move(key), std::move(value));
    if (i < line.size() && line[i] == ' ') ++i;
  }
  return out;
}

// A destructor's exception is reported as one error record and goes no
// further (it would end the process from a destructor).
TEST(Logging, RunNoThrowReportsTheExceptionAndStopsIt) {
  log::Capture capture(Level::kError);
  int ran = 0;
  log::RunNoThrow("closing a thing", [&ran] {
    ++ran;
    throw std::runtime_error("it broke");
  });
  log::RunNoThrow("closing another thing", [] { throw 42; });
  log::RunNoThrow("closing a fine thing", [&ran] { ++ran; });
  EXPECT_EQ(ran, 2);
  const auto records = capture.Matching(Level::kError, "closing");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].msg, "closing a thing");
  EXPECT_EQ(records[0].Get("error"), "it broke");
  EXPECT_EQ(records[1].msg, "closing another thing");
  EXPECT_EQ(records[1].Get("error"), "unknown exception");
}

TEST(Logging, JsonRecordHasEachFieldAsItsOwnKey) {
  const std::string line = LogThrough("json", "active-1");
  ASSERT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  const json::value v = json::parse(line);
  const json::object& o = v.as_object();
  EXPECT_TRUE(o.at("ts").is_string());
  EXPECT_EQ(o.at("level"), "warn");
  EXPECT_EQ(o.at("msg"), "fail-closed: suspended sandbox");  // no identifiers buried in it
  EXPECT_EQ(o.at("namespace"), "openshell-agents");
  EXPECT_EQ(o.at("sandbox"), "active-1");
  EXPECT_EQ(o.at("uid"), "u-1");
  EXPECT_EQ(o.at("reason"), "fence-stale");
  EXPECT_EQ(o.at("seq"), 33);  // numbers as numbers
  EXPECT_EQ(o.at("fence_from"), 1);
  EXPECT_EQ(o.at("fence_to"), 2);
  EXPECT_EQ(o.at("error"), "a \"quoted\" k=v\\\\path");  // the backslash escaped once for logs
  EXPECT_EQ(o.at("controller"), "sandbox");              // from the scope
  EXPECT_EQ(o.at("reconcile_id"), "r7");
  const std::vector<std::string> order = {
      "ts",  "level",      "msg",      "namespace", "sandbox",    "uid",         "reason",
      "seq", "fence_from", "fence_to", "error",     "controller", "reconcile_id"};
  std::vector<std::string> keys;
  for (const auto& kv : o) keys.emplace_back(kv.key());
  EXPECT_EQ(keys, order);
}

TEST(Logging, TextRecordIsLogfmtThatRoundTripsItsQuoting) {
  const std::string line = LogThrough("text", "my sandbox");
  ASSERT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_EQ(
      line.find("level=warn msg=\"fail-closed: suspended sandbox\" namespace=openshell-agents "
                "sandbox=\"my sandbox\""),
      28)  // after "ts=<RFC 3339> "
      << line;
  std::map<std::string, std::string> fields;
  for (auto& [k, v] : ParseLogfmt(line)) fields[k] = v;
  EXPECT_EQ(fields["level"], "warn");
  EXPECT_EQ(fields["msg"], "fail-closed: suspended sandbox");
  EXPECT_EQ(fields["sandbox"], "my sandbox");
  EXPECT_EQ(fields["seq"], "33");
  EXPECT_EQ(fields["fence_from"], "1");
  EXPECT_EQ(fields["error"], log::EscapeForLog("a \"quoted\" k=v\\path"));
  EXPECT_EQ(fields["reconcile_id"], "r7");
  EXPECT_EQ(fields.size(), 13u) << line;  // ts, level, msg and 10 fields: nothing split apart
}

TEST(Logging, TextLinesStayOneLineWithControlsEscaped) {
  const std::string line = LogThrough("text", kHostile);
  ASSERT_FALSE(line.empty());
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_EQ(line.back(), '\n');
  EXPECT_FALSE(HasControlBytes(line)) << line;
  EXPECT_EQ(line.find('\x9b'), std::string::npos);  // no raw 8-bit CSI
  std::map<std::string, std::string> fields;
  for (auto& [k, v] : ParseLogfmt(line)) fields[k] = v;
  EXPECT_EQ(fields["sandbox"],
            "sb\\n2026-01-01T00:00:00.000Z warn forged\\r\\e[31mred\\x9b2J\\u0085\\x00\\xff\\xfe"
            "\\x7fcaf\xC3\xA9");
  EXPECT_EQ(fields["seq"], "33");  // the forged text did not end the record early
}

TEST(Logging, JsonLinesAreValidUtf8JsonWithControlsEscaped) {
  const std::string line = LogThrough("json", kHostile);
  EXPECT_EQ(std::count(line.begin(), line.end(), '\n'), 1) << line;
  EXPECT_FALSE(HasControlBytes(line)) << line;
  boost::system::error_code ec;
  const json::value v = json::parse(line, ec);  // Boost.JSON checks UTF-8
  ASSERT_FALSE(ec) << ec.message() << ": " << line;
  const std::string sandbox(v.at("sandbox").as_string());
  EXPECT_NE(sandbox.find("sb\\n2026"), std::string::npos) << sandbox;
  EXPECT_NE(sandbox.find("\\e[31m"), std::string::npos) << sandbox;
  EXPECT_EQ(v.at("level"), "warn");
}

TEST(Logging, EscapeKeepsPrintableUtf8AndEscapesBackslashes) {
  using log::EscapeForLog;
  EXPECT_EQ(EscapeForLog("plain text, caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x94\x92"),
            "plain text, caf\xC3\xA9 \xE4\xB8\xAD \xF0\x9F\x94\x92");
  EXPECT_EQ(EscapeForLog("a\\nb"), "a\\\\nb");        // a literal backslash-n is not a newline
  EXPECT_EQ(EscapeForLog("\xC0\xAF"), "\\xc0\\xaf");  // overlong '/'
  EXPECT_EQ(EscapeForLog("\xED\xA0\x80"), "\\xed\\xa0\\x80");  // a surrogate
  EXPECT_EQ(EscapeForLog("\xE4\xB8"), "\\xe4\\xb8");           // truncated
  EXPECT_EQ(EscapeForLog("\t"), "\\t");
}

TEST(Logging, BearerTokensAreRedactedInEveryFormat) {
  const log::Record r{Level::kError,
                      "request failed: Authorization: Bearer s3cr3t-token",
                      {{"error", std::string("header 'authorization: bearer s3cr3t-token'")}}};
  for (auto format : {log::Format::kText, log::Format::kJson}) {
    const std::string line = log::FormatLine(format, r, std::chrono::system_clock::now());
    EXPECT_EQ(line.find("s3cr3t"), std::string::npos) << line;
    EXPECT_NE(line.find("Bearer [redacted]"), std::string::npos) << line;
  }
  EXPECT_EQ(log::RedactSecrets("bearer abc, next"), "bearer [redacted], next");
}

// ---- start-up failures, through the real binary -------------------------------

TEST(Logging, AStartUpErrorInJsonModeIsOneJsonRecord) {
  testing::TempDir dir;
  const std::string journal = dir.File("journal.db"), foreign = dir.File("foreign");
  {
    std::FILE* f = std::fopen(foreign.c_str(), "w");
    std::fputs("hello", f);
    std::fclose(f);
  }
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--journal " + journal + " --namespace Bad_NS", "--namespace 'Bad_NS'"},
      {"--journal " + foreign, "not an SQLite database"},  // an unusable journal
      {"--journal " + journal + " --kubeconfig " + dir.File("missing.yaml"), "missing.yaml"},
  };
  for (const auto& [flags, expected] : cases) {
    const auto r =
        testing::RunShell(std::string(FK_BINARY) + " run " + flags + " --log-format json 2>&1");
    EXPECT_EQ(r.exit_code, cli::kExitUnusable) << flags;
    ASSERT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << flags << ": " << r.out;
    boost::system::error_code ec;
    const json::value v = json::parse(r.out, ec);
    ASSERT_FALSE(ec) << flags << ": " << r.out;
    EXPECT_EQ(v.at("level"), "error") << r.out;
    EXPECT_NE(std::string(v.at("error").as_string()).find(expected), std::string::npos) << r.out;
  }
  // Text mode: one logfmt record with the same error field.
  const auto r = testing::RunShell(std::string(FK_BINARY) + " run --journal " + journal +
                                   " --namespace Bad_NS 2>&1");
  std::map<std::string, std::string> fields;
  for (auto& [k, v] : ParseLogfmt(r.out)) fields[k] = v;
  EXPECT_EQ(fields["level"], "error") << r.out;
  EXPECT_NE(fields["error"].find("--namespace 'Bad_NS'"), std::string::npos) << r.out;
}

// ---- debug and trace, over one reconciler -----------------------------------------

constexpr const char* kToken = "s3cr3t-token-value";

// One running sandbox "a" admitted under fence generation 1 while the fence
// is at generation 2 (stale, suspended once), and a healthy "b".
class ReconcileLogs : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::SimOptions so;
    so.emulate_agent_sandbox = false;
    sim_ = std::make_unique<sim::Simulator>(so, time_);
    auto sc = sim::ParseScenario(R"(
namespaces:
  - name: ns
    fence: {generation: 2}
    sandboxes:
      - {name: a, mode: Running, admittedFenceGeneration: 1}
      - {name: b, mode: Running, admittedFenceGeneration: 2}
)",
                                 "test");
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    ASSERT_TRUE(sim::ApplyScenario(*sim_, *sc).ok());
    journal::OpenOptions jo;
    jo.clock = &time_;
    auto j = journal::Journal::Open(dir_.File("journal.db"), jo);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
    auto transport = fk::testing::InProcessTransport(*sim_);
    transport_ = transport.get();
    kube::ClientOptions co;
    co.time = &time_;
    kube::ClusterConfig cluster;
    cluster.token = kToken;
    client_ = kube::ApiClient::CreateWithTransport(cluster, co, std::move(transport));
    reconciler_ = std::make_unique<reconciler::SandboxReconciler>(
        cache_, *client_, *journal_, time_, nullptr, nullptr, reconciler::ReconcilerOptions{});
    FillCache();
  }

  // The cache catches up with the simulator.
  void FillCache() {
    cache_.FillFrom("ns",
                    [this](const std::string& path) { return fk::testing::SimGet(*sim_, path); });
  }

  // Reconciles a, b, a, b: one suspend and three quiet passes.
  void ReconcileFour() {
    for (const char* name : {"a", "b", "a", "b"}) reconciler_->Reconcile({"ns", name});
  }

  ManualTimeSource time_;
  testing::TempDir dir_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<journal::Journal> journal_;
  kube::FakeTransport* transport_ = nullptr;
  std::unique_ptr<kube::ApiClient> client_;
  testing::MapCache cache_;
  std::unique_ptr<reconciler::SandboxReconciler> reconciler_;
};

TEST_F(ReconcileLogs, DebugSaysEachReconcilesVerdictWithItsReconcileId) {
  const log::Capture capture(Level::kDebug);
  ReconcileFour();
  const auto verdicts = capture.Matching(Level::kDebug, "reconciled");
  ASSERT_EQ(verdicts.size(), 4u);
  EXPECT_EQ(reconciler_->stats().reconciles, 4);
  std::set<std::string> ids;
  for (const log::Record& r : verdicts) ids.insert(r.Get("reconcile_id").value_or(""));
  EXPECT_EQ(ids.size(), 4u);  // one id per pass
  EXPECT_EQ(ids.count(""), 0u);
  EXPECT_EQ(verdicts[0].Get("sandbox"), "a");
  EXPECT_EQ(verdicts[0].Get("namespace"), "ns");
  EXPECT_EQ(verdicts[0].Get("verdict"), "suspend");
  EXPECT_EQ(verdicts[0].Get("action"), "patch-suspend");
  EXPECT_EQ(verdicts[0].Get("controller"), "sandbox");
  EXPECT_EQ(verdicts[1].Get("verdict"), "healthy");
  EXPECT_EQ(verdicts[1].Get("action"), "none");
  EXPECT_EQ(verdicts[2].Get("verdict"), "suspend");  // the cache still says Running...
  EXPECT_EQ(verdicts[2].Get("action"), "none");      // ...and the journal: already applied
  // The transition's one warning belongs to the first pass: same reconcile id, every field.
  const auto warnings = capture.Matching(Level::kWarn);
  ASSERT_EQ(warnings.size(), 1u);
  const log::Record& w = warnings[0];
  EXPECT_EQ(w.msg, "fail-closed: suspended sandbox");
  EXPECT_EQ(w.Get("reconcile_id"), verdicts[0].Get("reconcile_id"));
  EXPECT_EQ(w.Get("namespace"), "ns");
  EXPECT_EQ(w.Get("sandbox"), "a");
  EXPECT_FALSE(w.Get("uid").value_or("").empty());
  EXPECT_EQ(w.Get("reason"), "fence-stale");
  // The seq the PATCH wrote on the sandbox.
  const json::value a =
      fk::testing::SimGet(*sim_, std::string(fk::testing::kNsSandboxesPath) + "/a");
  EXPECT_EQ(w.Get("seq"),
            kube::StringField(kube::ObjectField(kube::ObjectField(a, "metadata"), "annotations"),
                              kube::kSeqAnnotation));
  EXPECT_EQ(w.Get("fence_from"), "1");
  EXPECT_EQ(w.Get("fence_to"), "2");
}

TEST_F(ReconcileLogs, InfoStaysQuietInSteadyState) {
  ReconcileFour();  // the transition happens
  FillCache();      // the cache sees "a" suspended: held from now on (said once, at info)
  ReconcileFour();
  const log::Capture capture(Level::kInfo);  // the steady state
  ReconcileFour();
  EXPECT_EQ(capture.records().size(), 0u);
  EXPECT_EQ(reconciler_->stats().reconciles, 12);
}

TEST_F(ReconcileLogs, TraceIsOneRecordPerApiRequestAndNeverTheToken) {
  const log::Capture capture(Level::kTrace);
  ReconcileFour();
  const auto requests = capture.Matching(Level::kTrace, "API request");
  const auto sent = transport_->requests();
  ASSERT_GT(sent.size(), 0u);
  EXPECT_EQ(requests.size(), sent.size());
  int counted = 0;
  for (const auto& [key, n] : client_->RequestCounts()) counted += n;
  EXPECT_EQ(static_cast<int>(requests.size()), counted);
  for (size_t i = 0; i < std::min(requests.size(), sent.size()); ++i) {
    EXPECT_EQ(requests[i].Get("verb"), sent[i].method);
    EXPECT_EQ(requests[i].Get("path"), sent[i].target.substr(0, sent[i].target.find('?')));
    EXPECT_TRUE(requests[i].Get("code").has_value());
    EXPECT_TRUE(requests[i].Get("duration_ms").has_value());
  }
  // The token went out on every request, and into no record in any format.
  for (const auto& r : sent) {
    EXPECT_NE(std::find(r.headers.begin(), r.headers.end(),
                        std::pair<std::string, std::string>("Authorization",
                                                            std::string("Bearer ") + kToken)),
              r.headers.end());
  }
  for (const log::Record& r : capture.records()) {
    for (auto format : {log::Format::kText, log::Format::kJson}) {
      const std::string line = log::FormatLine(format, r, std::chrono::system_clock::now());
      EXPECT_EQ(line.find(kToken), std::string::npos) << line;
    }
  }
}

}  // namespace
}  // namespace fk
