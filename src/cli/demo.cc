// `fencekeeper demo`, core-only edition.
//
// Until the Kubernetes client, simulator and reconciler loop exist (issues #3
// and #4), the demo drives the real decide() and the real SQLite journal
// in-process against a small scripted model of the upstream incident
// (OpenShell #3525): it shows the convergence rule and the journal, not HTTP.
// The report says so.
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <ostream>

#include "cli/commands.h"
#include "domain/decision.h"
#include "journal/journal.h"

namespace fk::cli {
using namespace fk::domain;

namespace {

// One sandbox as the scripted cluster holds it.
struct ModelSandbox {
  SandboxObservation obs;
  int64_t resource_version = 0;
  PodObservation workload_pod;
  PodObservation supervisor_pod;
};

class IncidentModel {
 public:
  IncidentModel() {
    Add("openshell-agents", "stopped-", 7, /*running=*/false);
    Add("openshell-agents", "active-", 3, /*running=*/true);
    Add("team-healthy", "healthy-", 3, /*running=*/true);
  }

  void RollFence(const std::string& ns) { fences_[ns].generation += 1; }
  int64_t FenceGeneration(const std::string& ns) { return fences_[ns].generation; }

  Snapshot Observe(const ModelSandbox& m, const JournalState& journal) const {
    Snapshot s;
    s.sandbox = m.obs;
    s.workload_fence = fences_.at(m.obs.ns);
    s.supervisor_fence = PolicyObservation{true, "sup-" + m.obs.ns, 1, true};
    s.workload_pod = m.workload_pod;
    s.supervisor_pod = m.supervisor_pod;
    s.history = history_for(journal, m.obs.uid);
    return s;
  }

  // The suspend PATCH as the API server and the agent-sandbox controller
  // would apply it: spec change bumps the generation, the pod goes away.
  int64_t ApplySuspend(const std::string& uid) {
    ModelSandbox& m = sandboxes_.at(uid);
    m.obs.should_run = false;
    m.obs.generation += 1;
    m.resource_version = ++rv_;
    m.workload_pod = {};
    return m.obs.generation;
  }

  std::map<std::string, ModelSandbox>& sandboxes() { return sandboxes_; }

 private:
  void Add(const std::string& ns, const std::string& prefix, int n, bool running) {
    fences_.emplace(ns, PolicyObservation{true, "fence-" + ns, 1, true});
    for (int i = 1; i <= n; ++i) {
      ModelSandbox m;
      m.obs.ns = ns;
      m.obs.name = prefix + std::to_string(i);
      m.obs.uid = "uid-" + ns + "-" + m.obs.name;
      m.obs.generation = running ? 2 : 3;
      m.obs.should_run = running;
      m.obs.fence_uid = "fence-" + ns;
      m.obs.fence_generation = 1;
      m.obs.workload_uid = "pod-" + m.obs.name;
      m.obs.supervisor_uid = "sup-pod-" + m.obs.name;
      m.resource_version = ++rv_;
      if (running) m.workload_pod = {true, "pod-" + m.obs.name};
      m.supervisor_pod = {true, "sup-pod-" + m.obs.name};
      sandboxes_.emplace(m.obs.uid, m);
    }
  }

  std::map<std::string, PolicyObservation> fences_;
  std::map<std::string, ModelSandbox> sandboxes_;
  int64_t rv_ = 100;
};

struct Tally {
  int patches = 0;
  int warnings = 0;
  int appended = 0;
};

// One resync pass over every sandbox: observe, decide, journal, act.
Status Pass(IncidentModel& model, journal::Journal& j, Tally& t, std::ostream& out,
            const std::map<std::string, ModelSandbox>* stale_copies = nullptr) {
  for (auto& [uid, m] : model.sandboxes()) {
    const ModelSandbox& seen = stale_copies && stale_copies->contains(uid) ? stale_copies->at(uid) : m;
    Evaluation eval;
    eval.snapshot = model.Observe(seen, j.state());
    eval.decision = decide(eval.snapshot);
    eval.resource_version = std::to_string(seen.resource_version);
    auto rec = j.Record(eval);
    if (!rec.ok()) return rec.status();
    t.appended += static_cast<int>(rec->appended);
    if (!rec->intent_seq) continue;
    ++t.patches;
    ++t.warnings;
    out << "  WARN  suspend " << m.obs.ns << "/" << m.obs.name << " reason="
        << ToString(eval.decision.reason) << " (" << eval.decision.note << ") journal seq "
        << *rec->intent_seq << "\n";
    const int64_t generation = model.ApplySuspend(uid);
    auto outcome = j.RecordOutcome(*rec->intent_seq, SuspendOutcome{Outcome::kApplied, generation, ""});
    if (!outcome.ok()) return outcome.status();
    ++t.appended;
  }
  return Status::Ok();
}

}  // namespace

int RunDemo(const DemoOptions& options, std::ostream& out, std::ostream& err) {
  std::string dir;
  if (options.directory) {
    dir = *options.directory;
  } else {
    std::string tmpl = (std::filesystem::temp_directory_path() / "fencekeeper-demo-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) {
      err << "fencekeeper demo: cannot create a temporary directory\n";
      return kExitUnusable;
    }
    dir = tmpl;
  }
  const std::string path = (std::filesystem::path(dir) / "journal.db").string();

  out << "fencekeeper demo (core only): the upstream incident, OpenShell #3525\n"
      << "  This build has the decision core and the SQLite journal; the Kubernetes client,\n"
      << "  simulator and reconciler loop are not built yet. The demo therefore runs the real\n"
      << "  decide() and journal in-process against a scripted model of the cluster: no HTTP.\n\n"
      << "  namespace openshell-agents: 7 sandboxes suspended, 3 running, all admitted under\n"
      << "  fence generation 1; namespace team-healthy: 3 running sandboxes.\n"
      << "  journal: " << path << "\n\n";

  IncidentModel model;
  Tally before, rollout, after;
  {
    auto j = journal::Journal::Open(path);
    if (!j.ok()) {
      err << "fencekeeper demo: " << j.status().ToString() << "\n";
      return kExitUnusable;
    }
    if (Status s = Pass(model, **j, before, out); !s.ok()) {
      err << "fencekeeper demo: " << s.ToString() << "\n";
      return kExitUnusable;
    }
    out << "pass 0 (fence generation 1): " << before.patches << " PATCHes, " << before.appended
        << " journal rows (first sight of every sandbox)\n";
    model.RollFence("openshell-agents");
    out << "fence openshell-agents/openshell-sandbox-workloads rolled to generation "
        << model.FenceGeneration("openshell-agents") << "; " << options.passes << " resync passes:\n";
    for (int i = 0; i < options.passes; ++i) {
      if (Status s = Pass(model, **j, rollout, out); !s.ok()) {
        err << "fencekeeper demo: " << s.ToString() << "\n";
        return kExitUnusable;
      }
    }
    out << "  -> " << rollout.patches << " PATCHes, " << rollout.warnings << " warnings, "
        << rollout.appended << " journal rows over " << options.passes << " passes\n";
  }
  // Restart: a new process would open the same file. The first pass after
  // the restart is served stale copies of the three suspended sandboxes
  // (older generation, still Running), as a lagging cache might.
  std::map<std::string, ModelSandbox> stale;
  for (auto& [uid, m] : model.sandboxes()) {
    if (m.obs.name.rfind("active-", 0) == 0) {
      ModelSandbox old = m;
      old.obs.should_run = true;
      old.obs.generation -= 1;
      old.workload_pod = {true, "pod-" + m.obs.name};
      stale.emplace(uid, old);
    }
  }
  auto j = journal::Journal::Open(path);
  if (!j.ok()) {
    err << "fencekeeper demo: " << j.status().ToString() << "\n";
    return kExitUnusable;
  }
  out << "restart on the same journal (first pass sees stale Running copies of the 3 suspended);\n"
      << options.passes << " more passes:\n";
  for (int i = 0; i < options.passes; ++i) {
    if (Status s = Pass(model, **j, after, out, i == 0 ? &stale : nullptr); !s.ok()) {
      err << "fencekeeper demo: " << s.ToString() << "\n";
      return kExitUnusable;
    }
  }
  out << "  -> " << after.patches << " PATCHes, " << after.warnings << " warnings, " << after.appended
      << " journal rows\n\n";

  out << "outcome per sandbox:\n";
  for (const auto& [uid, r] : (*j)->state().sandboxes) {
    out << "  " << r.ns << "/" << r.name << ": "
        << (r.decision ? ToString(r.decision->verdict) : "unknown");
    if (r.decision && r.decision->reason != Reason::kNone) out << " (" << ToString(r.decision->reason) << ")";
    if (r.history.applied_generation) out << ", suspended by fencekeeper at generation " << *r.history.applied_generation;
    out << "\n";
  }
  out << "\ntotals: " << before.patches + rollout.patches + after.patches << " PATCHes, "
      << before.warnings + rollout.warnings + after.warnings << " warnings (OpenShell before the fix: "
      << "a warning and a re-PATCH for each of the 7 suspended sandboxes every pass or two, forever)\n"
      << "\naudit the journal:\n"
      << "  sqlite3 -readonly " << path << " 'select seq, namespace, sandbox, reason, outcome from transitions'\n"
      << "  sqlite3 -readonly " << path << " 'select * from fence_observations'\n"
      << "  sqlite3 -readonly " << path << " 'select namespace, sandbox, verdict, reason from sandbox_state'\n"
      << "  fencekeeper replay --journal " << path << " --check\n";
  return kExitOk;
}

}  // namespace fk::cli
