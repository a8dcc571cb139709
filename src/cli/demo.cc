// `fencekeeper demo`: the upstream incident (OpenShell #3525) end to end,
// with nothing but the binary. An in-process simulator serves the built-in
// incident scenario over real HTTP on 127.0.0.1; the real reconciler runs
// against it with a journal in a temporary directory; the fence rolls to a
// new generation; resync passes go by; the reconciler restarts on the same
// journal for more passes. A second act: an "allow DNS" NetworkPolicy opens
// the fence of another namespace without touching it, and a third reconciler
// lifetime suspends the sandboxes it selects. Then the report.
#include <stdlib.h>

#include <boost/json.hpp>
#include <filesystem>
#include <optional>
#include <ostream>
#include <thread>

#include "cli/commands.h"
#include "cli/logging.h"
#include "common/random_id.h"
#include "journal/journal.h"
#include "journal/writer_lock.h"
#include "kube/client.h"
#include "kube/json_fields.h"
#include "reconciler/sandbox_controller.h"
#include "sim/scenario.h"
#include "sim/server.h"
#include "sim/store.h"

namespace fk::cli {
namespace json = boost::json;

namespace {

struct Phase {
  int patches = 0;
  int warnings = 0;
  int64_t journal_rows = 0;
  int other_requests = 0;  // API requests other than the informers' list and watch
};

// Runs one reconciler lifetime for `passes` resync passes after its caches sync.
Status RunReconciler(const std::string& server, const std::string& journal_path, int passes,
                     std::chrono::milliseconds resync, const std::function<void()>& after_sync,
                     sim::Simulator& sim, Phase* phase) {
  auto journal = journal::Journal::Open(journal_path);
  if (!journal.ok()) return journal.status();
  kube::ClusterConfig config;
  config.server = server;
  config.source = "demo simulator";
  auto client = kube::ApiClient::Create(config);
  if (!client.ok()) return client.status();
  reconciler::SandboxControllerOptions o;
  o.resync = resync;
  o.instance = "fencekeeper-demo";
  o.writer_id = NewWriterId();
  o.informer.initial_backoff = std::chrono::milliseconds(50);
  auto controller = reconciler::SandboxController::WithInformers(**client, **journal, o);
  const int64_t rows_before = (*journal)->state().last_seq;
  controller->Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!controller->Synced()) {
    if (std::chrono::steady_clock::now() > deadline)
      return Status::IOError("caches did not sync within 20s");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  // Two passes first, so the journal records the cluster as it was.
  while (controller->stats().resync_passes < 2) {
    if (std::chrono::steady_clock::now() > deadline)
      return Status::IOError("resync passes did not complete in time");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const int base_passes = controller->stats().resync_passes;
  const int requests_before =
      sim.RequestCount("*") - sim.RequestCount("list") - sim.RequestCount("watch");
  after_sync();
  // The passes, and every suspension followed through: the suspended
  // object's watch event journaled (a hold), so that the journal the demo
  // leaves shows each sandbox it suspended held, however the passes fell.
  const auto suspending = [&] {
    return (*journal)->Read([](const domain::JournalState& s) {
      for (const auto& [uid, r] : s.sandboxes)
        if (r.decision && r.decision->verdict == domain::Verdict::kSuspend) return true;
      return false;
    });
  };
  while (controller->stats().resync_passes < base_passes + passes || suspending()) {
    if (std::chrono::steady_clock::now() > deadline)
      return Status::IOError("resync passes did not complete in time");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  controller->Stop();
  const auto stats = controller->stats();
  phase->patches = stats.patches;
  phase->warnings = stats.warnings;
  phase->journal_rows = (*journal)->state().last_seq - rows_before;
  phase->other_requests = sim.RequestCount("*") - sim.RequestCount("list") -
                          sim.RequestCount("watch") - requests_before;
  return Status::Ok();
}

std::string Annotation(const json::value& obj, const char* key) {
  return kube::StringField(kube::ObjectField(kube::ObjectField(obj, "metadata"), "annotations"),
                           key)
      .value_or("");
}

// A temporary directory of its own unless --dir names one; nullopt if it cannot be made.
// --dir is created if it does not exist yet (parents too), as a user who
// names a fresh directory for the demo's journal expects.
std::optional<std::string> DemoDirectory(const DemoOptions& options) {
  if (options.directory) {
    std::error_code ec;
    std::filesystem::create_directories(*options.directory, ec);
    if (ec) return std::nullopt;
    return *options.directory;
  }
  std::string tmpl = (std::filesystem::temp_directory_path() / "fencekeeper-demo-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) return std::nullopt;
  return tmpl;
}

int Fail(std::ostream& err, const Status& s) {
  err << "fencekeeper demo: " << s.ToString() << "\n";
  return kExitUnusable;
}

void PrintIntro(std::ostream& out, const std::string& url, const std::string& path,
                std::chrono::milliseconds resync) {
  out << "fencekeeper demo: the upstream incident (OpenShell #3525), end to end\n"
      << "  Kubernetes API: an in-process simulator at " << url << " (scenario incident-3525)\n"
      << "  namespace openshell-agents: 7 sandboxes suspended, 3 running, all admitted under fence "
         "generation 1\n"
      << "  namespace team-healthy: 2 running sandboxes\n"
      << "  journal: " << path << "\n"
      << "  resync every " << resync.count()
      << "ms; warnings below are the reconciler's own log lines\n\n"
      << std::flush;
}

// Two reconciler lifetimes on one journal: the fence rolls during the first;
// the restart shows that the journal, not memory, keeps it from acting twice.
Status RunBothLifetimes(const std::string& url, const std::string& path, int passes,
                        std::chrono::milliseconds resync, sim::Simulator& simulator,
                        std::ostream& out, Phase* first, Phase* second) {
  auto roll_fence = [&] {
    out << "fence openshell-agents/openshell-sandbox-workloads rolled to generation "
        << sim::RollFence(simulator, "openshell-agents") << "\n"
        << std::flush;
  };
  out << "[1] reconciler started; two passes after its caches synced:\n" << std::flush;
  if (Status s = RunReconciler(url, path, passes, resync, roll_fence, simulator, first); !s.ok())
    return s;
  out << "    " << passes << " resync passes: " << first->patches << " PATCHes, " << first->warnings
      << " warnings, " << first->journal_rows << " journal rows\n\n"
      << "[2] reconciler restarted on the same journal\n"
      << std::flush;
  if (Status s = RunReconciler(
          url, path, passes, resync, [] {}, simulator, second);
      !s.ok())
    return s;
  out << "    " << passes << " resync passes: " << second->patches << " PATCHes, "
      << second->warnings << " warnings, " << second->journal_rows << " journal rows, "
      << second->other_requests << " API requests besides list and watch\n\n";
  return Status::Ok();
}

// The effective fence: one more policy that selects team-healthy's workload
// pods and gives them egress to DNS. The fence policy is untouched; its
// running sandboxes are suspended once, everything else is left alone.
Status RunBypassAct(const std::string& url, const std::string& path, int passes,
                    std::chrono::milliseconds resync, sim::Simulator& simulator, std::ostream& out,
                    Phase* third) {
  out << "[3] second act: NetworkPolicy team-healthy/allow-dns gives every workload pod egress to "
         "DNS;\n    the fence policy itself is untouched\n"
      << std::flush;
  Status added;
  auto add_policy = [&] {
    added =
        sim::AddNetworkPolicy(simulator, "team-healthy", "allow-dns", sim::AllowDnsEgressSpec());
  };
  if (Status s = RunReconciler(url, path, passes, resync, add_policy, simulator, third); !s.ok())
    return s;
  if (!added.ok()) return added;
  out << "    " << passes << " resync passes: " << third->patches << " PATCHes, " << third->warnings
      << " warnings, " << third->journal_rows << " journal rows\n\n";
  return Status::Ok();
}

void PrintOutcomePerSandbox(std::ostream& out, sim::Simulator& simulator) {
  out << "outcome per sandbox (as the API server holds them now):\n";
  const auto* sandboxes = sim::FindKind("agents.x-k8s.io", "sandboxes");
  for (const auto& obj :
       simulator.store().List(*sandboxes, "", sim::Selector(), sim::Selector()).items) {
    const std::string seq = Annotation(obj, "openshell.ai/fail-closed-journal-seq");
    out << "  " << kube::MetadataString(obj, "namespace") << "/"
        << kube::MetadataString(obj, "name") << ": "
        << obj.at("spec").at("operatingMode").as_string().c_str();
    if (!seq.empty()) {
      out << ", suspended by fencekeeper (reason "
          << Annotation(obj, "openshell.ai/fail-closed-reason") << ", journal seq " << seq << ")";
    } else {
      out << ", untouched";
    }
    out << "\n";
  }
}

void PrintTotalsAndNextSteps(std::ostream& out, const Phase& first, const Phase& second,
                             const Phase* third, const std::string& path) {
  out << "\nincident totals: " << first.patches + second.patches << " PATCHes, "
      << first.warnings + second.warnings
      << " warnings. OpenShell before its fix re-patched and re-warned the 7 suspended sandboxes "
         "on every pass;\n"
      << "fencekeeper held them (journaled once, never patched) and suspended each running one "
         "exactly once.\n";
  if (third) {
    out << "second act: " << third->patches << " PATCHes, " << third->warnings
        << " warnings: the running sandboxes allow-dns selects, each suspended once (reason "
           "fence-bypassed);\nnothing else was written.\n";
  }
  out << "\naudit the journal it left behind:\n"
      << "  sqlite3 -readonly " << path
      << " 'select seq, namespace, sandbox, reason, outcome from transitions'\n"
      << "  sqlite3 -readonly " << path << " 'select * from fence_observations'\n"
      << "  sqlite3 -readonly " << path << " 'select sandbox, policy, widens from fence_bypasses'\n"
      << "  sqlite3 -readonly " << path
      << " 'select namespace, sandbox, verdict, reason from sandbox_state'\n"
      << "  fencekeeper replay --journal " << path << " --check\n"
      << "\nthe incident as a swimlane timeline (one self-contained page, open it in a browser):\n"
      << "  fencekeeper replay --journal " << path << " --html incident.html\n";
}

}  // namespace

int RunDemo(const DemoOptions& options, std::ostream& out, std::ostream& err) {
  const std::optional<std::string> dir = DemoDirectory(options);
  if (!dir) {
    err << "fencekeeper demo: cannot create the directory for its journal ("
        << options.directory.value_or("a temporary directory") << ")\n";
    return kExitUnusable;
  }
  const std::string path = (std::filesystem::path(*dir) / "journal.db").string();
  if (Status s = SetUpLogging("text", "warn"); !s.ok()) return kExitUnusable;
  // Its reconciler writes the journal as `run` does, so it is the one writer
  // too (a `demo --dir` beside a running `run` must not write that journal).
  auto writer_lock = journal::WriterLock::Acquire(path, "demo");
  if (!writer_lock.ok()) return Fail(err, writer_lock.status());

  auto scenario = sim::ParseScenarioFile("incident-3525");
  if (!scenario.ok()) return Fail(err, scenario.status());
  scenario->options.bookmark_interval = std::chrono::milliseconds(200);
  sim::Simulator simulator(scenario->options);
  if (Status s = sim::ApplyScenario(simulator, *scenario); !s.ok()) return Fail(err, s);
  sim::Server server(simulator, {});
  if (Status s = server.Start(); !s.ok()) return Fail(err, s);
  const auto resync = std::chrono::milliseconds(100);
  PrintIntro(out, server.url(), path, resync);

  Phase first, second, third;
  if (Status s = RunBothLifetimes(server.url(), path, options.passes, resync, simulator, out,
                                  &first, &second);
      !s.ok())
    return Fail(err, s);
  if (options.bypass_act) {
    if (Status s = RunBypassAct(server.url(), path, options.passes, resync, simulator, out, &third);
        !s.ok())
      return Fail(err, s);
  }
  PrintOutcomePerSandbox(out, simulator);
  PrintTotalsAndNextSteps(out, first, second, options.bypass_act ? &third : nullptr, path);
  return kExitOk;
}

}  // namespace fk::cli
