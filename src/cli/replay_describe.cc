#include "cli/replay_describe.h"

#include <sstream>

namespace fk::cli {
using namespace fk::domain;

namespace {

std::string Opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "none"; }

std::string FenceRef(const std::optional<std::string>& uid, const std::optional<int64_t>& gen) {
  return (uid ? ShortUid(*uid) : std::string("none")) + "/" + Opt(gen);
}

std::string FenceRef(const PolicyObservation& p) {
  return p.present ? ShortUid(p.uid) + "/" + std::to_string(p.generation) : "absent";
}

void DescribeObservation(const Snapshot& sn, std::ostream& s) {
  const auto& sb = sn.sandbox;
  s << "generation=" << sb.generation << " mode=" << (sb.should_run ? "running" : "suspended");
  if (sb.bootstrapping) {
    s << " bootstrapping=" << ToString(sb.bootstrap_op);
    if (!sb.bootstrap_phase.empty()) s << " phase=" << sb.bootstrap_phase;
    s << " started-at-ms=" << Opt(sb.bootstrap_started_at_ms);
  }
  if (sb.deleting) s << " deleting";
  s << " admitted-fence=" << FenceRef(sb.fence_uid, sb.fence_generation);
  s << " fence=" << FenceRef(sn.workload_fence);
  s << " pods=" << (sn.workload_pod.present ? "W" : "-") << (sn.supervisor_pod.present ? "S" : "-");
  if (sn.workload_pod.present && sn.workload_pod.scheduling_gated) s << " workload-gated";
  if (sn.history.pending_intent_seq) s << " pending-intent=" << *sn.history.pending_intent_seq;
  if (sn.history.applied_generation)
    s << " suspended-at-generation=" << *sn.history.applied_generation;
  // 0: recorded by a version that did not record the time.
  if (sn.observed_at_ms != 0) s << " observed-at-ms=" << sn.observed_at_ms;
}

void DescribeDecision(const Decision& d, std::ostream& s) {
  s << ToString(d.verdict);
  if (d.reason != Reason::kNone) s << " (" << ToString(d.reason) << ")";
  if (d.action != Action::kNone) s << " -> " << ToString(d.action);
  if (!d.note.empty()) s << ": " << d.note;
}

}  // namespace

std::string ShortUid(const std::string& uid) {
  return uid.empty() ? "-" : uid.substr(0, kShortUidLength);
}

std::string ShortWriter(const std::string& writer) { return ShortUid(writer); }

std::string Subject(const Event& e) { return e.ns + "/" + e.name; }

std::string Describe(const Event& e) {
  std::ostringstream s;
  if (const auto* f = std::get_if<FenceObserved>(&e.body)) {
    if (!f->observation.present) return "policy absent";
    s << "uid=" << ShortUid(f->observation.uid) << " generation=" << f->observation.generation
      << " intact=" << (f->observation.intact ? "yes" : "no");
  } else if (const auto* o = std::get_if<SandboxObserved>(&e.body)) {
    DescribeObservation(o->snapshot, s);
  } else if (const auto* d = std::get_if<Decided>(&e.body)) {
    DescribeDecision(d->decision, s);
  } else if (const auto* i = std::get_if<SuspendIntent>(&e.body)) {
    s << "suspend reason=" << ToString(i->reason) << " generation=" << i->observed_generation
      << " resourceVersion=" << i->resource_version;
    if (!i->writer.empty()) s << " writer=" << i->writer;
    if (!i->note.empty()) s << ": " << i->note;
  } else if (const auto* g = std::get_if<Forgotten>(&e.body)) {
    s << "forgotten: " << g->detail;
  } else if (const auto* l = std::get_if<Leadership>(&e.body)) {
    s << l->state << " by " << l->identity;
  } else if (const auto* p = std::get_if<Pruned>(&e.body)) {
    s << "pruned seq " << p->first_seq << "-" << p->last_seq << " (" << p->rows << " rows)";
    if (!p->archive.empty()) s << " to archive " << p->archive;
  } else if (const auto* w = std::get_if<WriterStarted>(&e.body)) {
    s << "writer " << w->writer << " started, " << w->enforcement.Describe();
  } else if (const auto* c = std::get_if<SuspendOutcome>(&e.body)) {
    s << ToString(c->outcome) << " (intent " << e.ref_seq << ")";
    if (c->applied_generation) s << " at generation " << *c->applied_generation;
    if (!c->detail.empty()) s << ": " << c->detail;
  }
  return s.str();
}

const std::vector<LegendEntry>& Legend() {
  static const std::vector<LegendEntry> kLegend = {
      {"uid", "first 8 characters of the sandbox's UID (--format json prints it whole)"},
      {"generation", "the object's metadata.generation"},
      {"mode", "the sandbox's desired mode: running, or suspended"},
      {"admitted-fence=U/G", "the fence (UID/generation) the sandbox was admitted under"},
      {"fence=U/G", "the namespace's workload fence when observed (UID/generation), or absent"},
      {"pods=WS",
       "W: the workload pod exists; S: the supervisor pod exists; -: that pod is absent"},
      {"workload-gated", "the workload pod still has scheduling gates: it cannot run yet"},
      {"bootstrapping", "OpenShell is installing the fence (operation, phase, start time)"},
      {"pending-intent=N", "a suspend intent (seq N) with no outcome yet"},
      {"suspended-at-generation=G", "a suspend was applied at sandbox generation G"},
      {"observed-at-ms", "when it was observed (ms since the epoch); an admitting verdict expires"},
      {"intact", "yes: the policy's spec is the intended fence; no: it was altered"},
      {"healthy / admitting", "running allowed: admitted under the current fence / being admitted"},
      {"suspend", "must fail closed; -> patch-suspend: the PATCH to Suspended is due"},
      {"hold", "already fail-closed behind a changed fence: nothing to do"},
      {"ignore", "being deleted"},
      {"intent N", "outcome of the suspend intent recorded at seq N"},
      {"applied / failed", "the PATCH landed / was refused by the API server (retried as is)"},
      {"conflict / superseded",
       "the sandbox changed first, so it is decided again / the sandbox is gone"},
  };
  return kLegend;
}

const std::vector<LegendEntry>& TimelineLegend() {
  static const std::vector<LegendEntry> kLegend = {
      {"journal", "the --journal the row was read from (listed at the top)"},
      {"writer",
       "first 8 characters of the writer id of the `run` that wrote the row (--format json "
       "prints it whole); -: the journal does not say. Suspend intents record it; a row "
       "between two intents of one writer is that writer's"},
  };
  return kLegend;
}

}  // namespace fk::cli
