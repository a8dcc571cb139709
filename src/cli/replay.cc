// `fencekeeper replay`: the journal as a timeline, the state folded from it,
// and with --check a re-run of decide() over every recorded observation.
#include <boost/json.hpp>
#include <cstdio>
#include <ostream>
#include <sstream>

#include "cli/commands.h"
#include "domain/journal_state.h"
#include "journal/codec.h"
#include "journal/journal.h"

namespace fk::cli {
namespace json = boost::json;
using namespace fk::domain;

namespace {

std::string Opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "none"; }
std::string Opt(const std::optional<std::string>& v) { return v ? *v : "none"; }

std::string Describe(const Event& e) {
  std::ostringstream s;
  if (const auto* f = std::get_if<FenceObserved>(&e.body)) {
    if (!f->observation.present) return "policy absent";
    s << "uid=" << f->observation.uid << " generation=" << f->observation.generation
      << " intact=" << (f->observation.intact ? "yes" : "no");
  } else if (const auto* o = std::get_if<SandboxObserved>(&e.body)) {
    const auto& sn = o->snapshot;
    const auto& sb = sn.sandbox;
    s << "generation=" << sb.generation << " mode=" << (sb.should_run ? "running" : "suspended");
    if (sb.bootstrapping) {
      s << " bootstrapping=" << ToString(sb.bootstrap_op);
      if (!sb.bootstrap_phase.empty()) s << " phase=" << sb.bootstrap_phase;
      s << " started-at-ms=" << Opt(sb.bootstrap_started_at_ms);
    }
    if (sb.deleting) s << " deleting";
    s << " admitted-fence=" << Opt(sb.fence_uid) << "/" << Opt(sb.fence_generation);
    s << " fence="
      << (sn.workload_fence.present
              ? sn.workload_fence.uid + "/" + std::to_string(sn.workload_fence.generation)
              : std::string("absent"));
    s << " pods=" << (sn.workload_pod.present ? "W" : "-")
      << (sn.supervisor_pod.present ? "S" : "-");
    if (sn.workload_pod.present && sn.workload_pod.scheduling_gated) s << " workload-gated";
    if (sn.history.pending_intent_seq) s << " pending-intent=" << *sn.history.pending_intent_seq;
    if (sn.history.applied_generation)
      s << " suspended-at-generation=" << *sn.history.applied_generation;
    // 0: recorded by a version that did not record the time.
    if (sn.observed_at_ms != 0) s << " observed-at-ms=" << sn.observed_at_ms;
  } else if (const auto* d = std::get_if<Decided>(&e.body)) {
    s << ToString(d->decision.verdict);
    if (d->decision.reason != Reason::kNone) s << " (" << ToString(d->decision.reason) << ")";
    if (d->decision.action != Action::kNone) s << " -> " << ToString(d->decision.action);
    if (!d->decision.note.empty()) s << ": " << d->decision.note;
  } else if (const auto* i = std::get_if<SuspendIntent>(&e.body)) {
    s << "suspend reason=" << ToString(i->reason) << " generation=" << i->observed_generation
      << " resourceVersion=" << i->resource_version;
    if (!i->note.empty()) s << ": " << i->note;
  } else if (const auto* f = std::get_if<Forgotten>(&e.body)) {
    s << "forgotten: " << f->detail;
  } else if (const auto* l = std::get_if<Leadership>(&e.body)) {
    s << l->state << " by " << l->identity;
  } else if (const auto* o = std::get_if<SuspendOutcome>(&e.body)) {
    s << ToString(o->outcome) << " (intent " << e.ref_seq << ")";
    if (o->applied_generation) s << " at generation " << *o->applied_generation;
    if (!o->detail.empty()) s << ": " << o->detail;
  }
  return s.str();
}

struct Divergence {
  int64_t seq = 0;
  std::string what;
};

// Walks the journal once: folds, prints, and checks.
class Replayer {
 public:
  Replayer(const ReplayOptions& o, std::ostream& out) : options_(o), out_(out) {}

  bool Selected(const Event& e) const {
    if (!options_.sandbox) return true;
    const std::string subject = e.ns + "/" + e.name;
    if (e.kind() == EventKind::kFenceObserved) return options_.sandbox->rfind(e.ns + "/", 0) == 0;
    return subject == *options_.sandbox;
  }

  Status Visit(const Event& e) {
    if (e.seq <= state_.last_seq) {
      Diverge(e.seq, "seq is not increasing (previous " + std::to_string(state_.last_seq) + ")");
    }
    const bool selected = Selected(e);
    if (options_.check && selected) Check(e);
    if (selected) Print(e);
    fold(state_, e);
    ++count_;
    return Status::Ok();
  }

  void Check(const Event& e) {
    if (const auto* o = std::get_if<SandboxObserved>(&e.body)) {
      const SuspendHistory folded = history_for(state_, e.uid);
      if (!(o->snapshot.history == folded)) {
        Diverge(e.seq,
                "observation records suspend history pending=" +
                    Opt(o->snapshot.history.pending_intent_seq) +
                    " applied=" + Opt(o->snapshot.history.applied_generation) +
                    " but the journal before it implies pending=" + Opt(folded.pending_intent_seq) +
                    " applied=" + Opt(folded.applied_generation));
      }
    } else if (const auto* d = std::get_if<Decided>(&e.body)) {
      auto it = state_.sandboxes.find(e.uid);
      if (it == state_.sandboxes.end() || !it->second.observation) {
        Diverge(e.seq, "decision without a recorded observation");
        return;
      }
      // The recorded observation carries its own time (observed_at_ms), so a
      // verdict that depends on time (admitting) is re-decided as of then.
      const Decision now = decide(*it->second.observation);
      ++decisions_checked_;
      if (!now.SameOutcome(d->decision)) {
        Diverge(e.seq, std::string("recorded decision ") + Summary(d->decision) +
                           ", but decide() now gives " + Summary(now) + " for observation seq " +
                           std::to_string(it->second.observation_seq));
      }
    } else if (std::holds_alternative<SuspendIntent>(e.body)) {
      auto it = state_.sandboxes.find(e.uid);
      if (it == state_.sandboxes.end() || !it->second.decision ||
          it->second.decision->action != Action::kPatchSuspend) {
        Diverge(e.seq, "suspend intent not preceded by a decision to patch");
      }
    } else if (std::holds_alternative<SuspendOutcome>(e.body)) {
      auto it = state_.sandboxes.find(e.uid);
      const bool refused = it != state_.sandboxes.end() && it->second.refused &&
                           it->second.refused->intent.seq == e.ref_seq;
      if (!state_.pending_intents.contains(e.ref_seq) && !refused) {
        Diverge(e.seq, "outcome for seq " + std::to_string(e.ref_seq) +
                           ", which is neither a pending nor a refused intent");
      }
    } else if (std::holds_alternative<Forgotten>(e.body)) {
      for (const auto& [seq, intent] : state_.pending_intents) {
        if (intent.uid == e.uid)
          Diverge(e.seq, "sandbox forgotten with intent seq " + std::to_string(seq) + " pending");
      }
    }
  }

  static std::string Summary(const Decision& d) {
    std::string s = ToString(d.verdict);
    if (d.reason != Reason::kNone) s += "/" + std::string(ToString(d.reason));
    s += "/" + std::string(ToString(d.action));
    if (d.reevaluate_at_ms) s += " until " + std::to_string(*d.reevaluate_at_ms);
    return s;
  }

  void Diverge(int64_t seq, std::string what) {
    if (!first_) first_ = Divergence{seq, std::move(what)};
    ++divergences_;
  }

  void Print(const Event& e) {
    if (options_.json) {
      boost::system::error_code ec;
      events_.push_back(json::parse(journal::EncodeEvent(e), ec));
      return;
    }
    char head[160];
    std::snprintf(head, sizeof head, "%-6lld %-24s %-16s ", static_cast<long long>(e.seq),
                  e.recorded_at.c_str(), ToString(e.kind()));
    out_ << head << e.ns << "/" << e.name << "  " << Describe(e) << "\n";
  }

  const JournalState& state() const { return state_; }
  const std::optional<Divergence>& first() const { return first_; }
  void set_divergence(int64_t seq, std::string what) { Diverge(seq, std::move(what)); }
  size_t divergences() const { return divergences_; }
  size_t decisions_checked() const { return decisions_checked_; }
  size_t count() const { return count_; }
  json::array& events() { return events_; }

 private:
  const ReplayOptions& options_;
  std::ostream& out_;
  JournalState state_;
  std::optional<Divergence> first_;
  size_t divergences_ = 0;
  size_t decisions_checked_ = 0;
  size_t count_ = 0;
  json::array events_;
};

bool SandboxSelected(const ReplayOptions& o, const SandboxRecord& r) {
  return !o.sandbox || *o.sandbox == r.ns + "/" + r.name;
}

void PrintStateText(const ReplayOptions& o, const JournalState& s, std::ostream& out) {
  out << "\nstate after seq " << s.last_seq << ":\n";
  for (const auto& [key, f] : s.fences) {
    if (o.sandbox && o.sandbox->rfind(f.ns + "/", 0) != 0) continue;
    out << "  fence   " << f.ns << "/" << f.policy << "  ";
    if (!f.observation.present)
      out << "absent";
    else
      out << "uid=" << f.observation.uid << " generation=" << f.observation.generation
          << " intact=" << (f.observation.intact ? "yes" : "no");
    out << "  (seq " << f.seq << ")\n";
  }
  for (const auto& [uid, r] : s.sandboxes) {
    if (!SandboxSelected(o, r)) continue;
    out << "  sandbox " << r.ns << "/" << r.name << "  uid=" << uid;
    if (r.decision) {
      out << " verdict=" << ToString(r.decision->verdict);
      if (r.decision->reason != Reason::kNone) out << " reason=" << ToString(r.decision->reason);
    }
    if (r.history.pending_intent_seq) out << " pending-intent=" << *r.history.pending_intent_seq;
    if (r.history.applied_generation)
      out << " suspended-at-generation=" << *r.history.applied_generation;
    out << "\n";
  }
}

json::object StateJson(const ReplayOptions& o, const JournalState& s) {
  json::array fences, sandboxes;
  for (const auto& [key, f] : s.fences) {
    if (o.sandbox && o.sandbox->rfind(f.ns + "/", 0) != 0) continue;
    fences.push_back({{"namespace", f.ns},
                      {"policy", f.policy},
                      {"present", f.observation.present},
                      {"uid", f.observation.uid},
                      {"generation", f.observation.generation},
                      {"intact", f.observation.intact},
                      {"seq", f.seq}});
  }
  for (const auto& [uid, r] : s.sandboxes) {
    if (!SandboxSelected(o, r)) continue;
    json::object sb{{"namespace", r.ns}, {"name", r.name}, {"uid", uid}};
    sb["verdict"] = r.decision ? json::value(ToString(r.decision->verdict)) : json::value(nullptr);
    sb["reason"] = r.decision ? json::value(ToString(r.decision->reason)) : json::value(nullptr);
    sb["pending_intent_seq"] =
        r.history.pending_intent_seq ? json::value(*r.history.pending_intent_seq) : nullptr;
    sb["applied_generation"] =
        r.history.applied_generation ? json::value(*r.history.applied_generation) : nullptr;
    sandboxes.push_back(std::move(sb));
  }
  return {
      {"last_seq", s.last_seq}, {"fences", std::move(fences)}, {"sandboxes", std::move(sandboxes)}};
}

}  // namespace

int RunReplay(const ReplayOptions& options, std::ostream& out, std::ostream& err) {
  if (options.sandbox && options.sandbox->find('/') == std::string::npos) {
    err << "fencekeeper replay: --sandbox takes NAMESPACE/NAME, got '" << *options.sandbox << "'\n";
    return kExitUnusable;
  }
  journal::OpenOptions open;
  open.read_only = true;
  auto j = journal::Journal::Open(options.journal, open);
  if (!j.ok()) {
    err << "fencekeeper replay: " << j.status().ToString() << "\n";
    return kExitUnusable;
  }
  Replayer replayer(options, out);
  std::string integrity = "not checked";
  if (options.check) {
    auto ic = (*j)->IntegrityCheck();
    if (!ic.ok()) {
      err << "fencekeeper replay: " << ic.status().ToString() << "\n";
      return kExitUnusable;
    }
    integrity = *ic;
    if (integrity != "ok") replayer.set_divergence(0, "integrity_check: " + integrity);
  }
  if (!options.json)
    out << "journal " << options.journal << " (schema version " << (*j)->schema_version() << ")\n";
  const int64_t until = options.until.value_or(INT64_MAX);
  Status walked = (*j)->ForEachEvent(1, until, [&](const Event& e) { return replayer.Visit(e); });
  if (!walked.ok()) {
    err << "fencekeeper replay: " << walked.ToString() << "\n";
    return options.check ? kExitCheckFailed : kExitUnusable;
  }
  // The projection tables must equal what folding the whole journal gives.
  if (options.check && !options.until && !options.sandbox && !(replayer.state() == (*j)->state())) {
    replayer.set_divergence(replayer.state().last_seq,
                            "projection tables differ from the state folded from the events");
  }

  if (options.json) {
    json::object doc{{"journal", options.journal},
                     {"schema_version", (*j)->schema_version()},
                     {"events", std::move(replayer.events())},
                     {"state", StateJson(options, replayer.state())}};
    if (options.check) {
      json::object check{{"ok", replayer.divergences() == 0},
                         {"integrity_check", integrity},
                         {"events", replayer.count()},
                         {"decisions_checked", replayer.decisions_checked()},
                         {"divergences", replayer.divergences()}};
      if (replayer.first()) {
        check["first_divergence"] = {{"seq", replayer.first()->seq},
                                     {"what", replayer.first()->what}};
      }
      doc["check"] = std::move(check);
    }
    out << json::serialize(doc) << "\n";
  } else {
    PrintStateText(options, replayer.state(), out);
    if (options.check) {
      out << "\ncheck: " << replayer.count() << " events, " << replayer.decisions_checked()
          << " decisions re-run, integrity_check " << integrity << ", " << replayer.divergences()
          << " divergence(s)\n";
    }
  }
  if (replayer.first()) {
    err << "fencekeeper replay --check: divergence at seq " << replayer.first()->seq << ": "
        << replayer.first()->what << "\n";
    return kExitCheckFailed;
  }
  return kExitOk;
}

}  // namespace fk::cli
