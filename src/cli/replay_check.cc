#include "cli/replay_check.h"

#include "domain/fold.h"

namespace fk::cli {
using namespace fk::domain;

namespace {

std::string Opt(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "none"; }

std::string Summary(const Decision& d) {
  std::string s = ToString(d.verdict);
  if (d.reason != Reason::kNone) s += "/" + std::string(ToString(d.reason));
  s += "/" + std::string(ToString(d.action));
  if (d.reevaluate_at_ms) s += " until " + std::to_string(*d.reevaluate_at_ms);
  return s;
}

}  // namespace

void ReplayChecker::Visit(const JournalState& before, const Event& e, bool selected) {
  ++events_;
  if (e.seq <= last_seq_)
    Diverge(e.seq, "seq is not increasing (previous " + std::to_string(last_seq_) + ")");
  last_seq_ = e.seq;
  if (!selected) return;
  CheckObservation(before, e);
  CheckDecision(before, e);
  CheckIntentAndOutcome(before, e);
}

void ReplayChecker::Diverge(int64_t seq, std::string what) {
  if (kept_.size() < kKept) kept_.push_back({seq, std::move(what)});
  ++count_;
}

void ReplayChecker::CheckObservation(const JournalState& s, const Event& e) {
  const auto* o = std::get_if<SandboxObserved>(&e.body);
  if (!o) return;
  const SuspendHistory folded = history_for(s, e.uid);
  if (o->snapshot.history == folded) return;
  Diverge(
      e.seq,
      "observation records suspend history pending=" + Opt(o->snapshot.history.pending_intent_seq) +
          " applied=" + Opt(o->snapshot.history.applied_generation) +
          " dry-run=" + Opt(o->snapshot.history.dry_run_generation) +
          " but the journal before it implies pending=" + Opt(folded.pending_intent_seq) +
          " applied=" + Opt(folded.applied_generation) +
          " dry-run=" + Opt(folded.dry_run_generation));
}

void ReplayChecker::CheckDecision(const JournalState& s, const Event& e) {
  const auto* d = std::get_if<Decided>(&e.body);
  if (!d) return;
  auto it = s.sandboxes.find(e.uid);
  if (it == s.sandboxes.end() || !it->second.observation) {
    Diverge(e.seq, "decision without a recorded observation");
    return;
  }
  // The recorded observation carries its own time (observed_at_ms), so a
  // verdict that depends on time (admitting) is re-decided as of then.
  const Decision now = decide(*it->second.observation);
  ++decisions_checked_;
  if (now.SameOutcome(d->decision)) return;
  Diverge(e.seq, "recorded decision " + Summary(d->decision) + ", but decide() now gives " +
                     Summary(now) + " for observation seq " +
                     std::to_string(it->second.observation_seq));
}

void ReplayChecker::CheckIntentAndOutcome(const JournalState& s, const Event& e) {
  auto it = s.sandboxes.find(e.uid);
  if (std::holds_alternative<SuspendIntent>(e.body)) {
    const Action action = it == s.sandboxes.end() || !it->second.decision
                              ? Action::kNone
                              : it->second.decision->action;
    if (action != Action::kPatchSuspend && action != Action::kRecordDryRun)
      Diverge(e.seq, "suspend intent not preceded by a decision to patch or to record a dry run");
  } else if (const auto* o = std::get_if<SuspendOutcome>(&e.body)) {
    const bool refused = it != s.sandboxes.end() && it->second.refused &&
                         it->second.refused->intent.seq == e.ref_seq;
    if (!s.pending_intents.contains(e.ref_seq) && !refused) {
      Diverge(e.seq, "outcome for seq " + std::to_string(e.ref_seq) +
                         ", which is neither a pending nor a refused intent");
    }
    // A dry run sends nothing: its outcome is its intent's, and only its.
    const bool dry_run_decided = it != s.sandboxes.end() && it->second.decision &&
                                 it->second.decision->action == Action::kRecordDryRun;
    if ((o->outcome == Outcome::kDryRun) != (dry_run_decided && e.ref_seq == e.seq - 1))
      Diverge(e.seq, std::string(o->outcome == Outcome::kDryRun
                                     ? "dry-run outcome for an intent that was to be sent"
                                     : "outcome of a dry-run intent other than dry-run"));
  } else if (std::holds_alternative<Forgotten>(e.body)) {
    for (const auto& [seq, intent] : s.pending_intents) {
      if (intent.uid == e.uid)
        Diverge(e.seq, "sandbox forgotten with intent seq " + std::to_string(seq) + " pending");
    }
  }
}

}  // namespace fk::cli
