#include "domain/plan.h"

#include <utility>

#include "domain/decision.h"
#include "domain/fold.h"

namespace fk::domain {
namespace {

Event Subject(const SandboxObservation& sb, EventBody body) {
  Event e;
  e.ns = sb.ns;
  e.name = sb.name;
  e.uid = sb.uid;
  e.body = std::move(body);
  return e;
}

// A policy (uid) observed at a lower generation than one recorded for it.
bool OlderCopy(const PolicyObservation& seen, const FenceRecord& recorded) {
  if (!seen.present) return false;
  auto it = recorded.max_generation.find(seen.uid);
  return it != recorded.max_generation.end() && seen.generation < it->second;
}

}  // namespace

bool SameObjects(const Snapshot& a, const Snapshot& b) {
  // Compare everything but the time, so a field added later is compared too.
  Snapshot b_at_a_time = b;
  b_at_a_time.observed_at_ms = a.observed_at_ms;
  if (!ReadsPods(a.sandbox)) {  // then pods are no change (b's differ in the sandbox if they count)
    b_at_a_time.workload_pod = a.workload_pod;
    b_at_a_time.supervisor_pod = a.supervisor_pod;
  }
  return a == b_at_a_time;
}

std::optional<IntentRecord> refused_to_retry(const JournalState& state, const Evaluation& eval) {
  if (eval.decision.action != Action::kPatchSuspend) return std::nullopt;
  const SandboxObservation& sb = eval.snapshot.sandbox;
  auto it = state.sandboxes.find(sb.uid);
  if (it == state.sandboxes.end() || !it->second.refused) return std::nullopt;
  const SandboxRecord& rec = it->second;
  const SuspendIntent& refused = rec.refused->intent.intent;
  // The note is not compared: it may mention times (see plan_events).
  const bool same =
      rec.observed && rec.observed->objects == ObjectsDigest(eval.snapshot) && rec.decision &&
      rec.decision->SameOutcome(eval.decision) && refused.reason == eval.decision.reason &&
      refused.observed_generation == sb.generation &&
      refused.resource_version == eval.resource_version && refused.api_version == sb.api_version;
  if (!same) return std::nullopt;
  return rec.refused->intent;
}

std::vector<Event> plan_events(const JournalState& state, const Evaluation& eval) {
  std::vector<Event> out;
  const SandboxObservation& sb = eval.snapshot.sandbox;

  const std::pair<const char*, const PolicyObservation*> policies[] = {
      {kWorkloadPolicyName, &eval.snapshot.workload_fence},
      {kSupervisorPolicyName, &eval.snapshot.supervisor_fence},
  };
  for (const auto& [policy, obs] : policies) {
    auto it = state.fences.find({sb.ns, policy});
    const bool known = it != state.fences.end();
    // A policy never seen and still absent is not news; anything else that
    // differs from the last record is — unless it is older than the record:
    // generations only grow, so a pass that read the same policy at a lower
    // generation (a worker whose snapshot predates another's commit) holds a
    // stale copy, and the recorded fence never goes backwards.
    if ((known && it->second.observation == *obs) || (!known && !obs->present)) continue;
    if (known && OlderCopy(*obs, it->second)) continue;
    Event e;
    e.ns = sb.ns;
    e.name = policy;
    e.body = FenceObserved{policy, *obs};
    out.push_back(std::move(e));
  }

  // A refusal that persists appends nothing: the refused intent is sent again.
  if (refused_to_retry(state, eval)) return out;
  const bool patch = eval.decision.action == Action::kPatchSuspend ||
                     eval.decision.action == Action::kRecordDryRun;  // an intent either way
  auto it = state.sandboxes.find(sb.uid);
  const SandboxRecord* rec = it == state.sandboxes.end() ? nullptr : &it->second;
  // The observation time is not a change by itself, and neither is a note
  // (it may say how long ago a bootstrap started). A decision that changes
  // only because time passed (an admitting sandbox whose grace ended) is a
  // change: then the observation is recorded again, carrying the new time, so
  // replay re-decides it at that time.
  const bool observation_changed =
      !rec || !rec->observed || rec->observed->objects != ObjectsDigest(eval.snapshot);
  const bool decision_changed =
      !rec || !rec->decision || !rec->decision->SameOutcome(eval.decision);
  if (observation_changed || decision_changed || patch) {
    out.push_back(Subject(sb, SandboxObserved{eval.snapshot}));
    out.push_back(Subject(sb, Decided{eval.decision}));
  }
  if (patch) {
    out.push_back(
        Subject(sb, SuspendIntent{eval.decision.reason, sb.generation, eval.resource_version,
                                  sb.api_version, eval.decision.note.str(), eval.writer}));
  }
  return out;
}

namespace {

// Whether the suspension a hold holds is fencekeeper's own, from this
// episode: its Warning Event already said why.
bool OwnSuspension(const SandboxRecord& r, const SandboxObservation& sb) {
  const SuspendHistory& h = r.history;
  // Applied at the observed generation or later: the spec is still ours.
  if (h.applied_generation && *h.applied_generation >= sb.generation) return true;
  // An intent still pending: the suspension seen may be our PATCH, landed
  // before its outcome was journaled.
  if (h.pending_intent_seq) return true;
  // The decision before the hold was ours to suspend and a suspend of ours
  // has applied: a refused intent sent again lands at a generation past the
  // one its outcome records (simulation seed 3128).
  return r.decision && r.decision->verdict == Verdict::kSuspend && h.applied_generation;
}

}  // namespace

bool starts_hold_episode(const JournalState& state, const Evaluation& eval, uint64_t held_before) {
  if (eval.decision.verdict != Verdict::kHold) return false;
  const SandboxObservation& sb = eval.snapshot.sandbox;
  auto it = state.sandboxes.find(sb.uid);
  if (it == state.sandboxes.end()) return true;  // first seen held
  const SandboxRecord& r = it->second;
  if (r.decision && r.decision->verdict == Verdict::kHold) return false;  // the episode goes on
  const uint64_t held = r.held_sandbox ? r.held_sandbox : held_before;
  if (held == SandboxDigest(sb)) return false;  // the same sandbox, held again: the same episode
  return !OwnSuspension(r, sb);
}

bool needs_held_sandbox(const JournalState& state, const Evaluation& eval) {
  if (eval.decision.verdict != Verdict::kHold) return false;
  auto it = state.sandboxes.find(eval.snapshot.sandbox.uid);
  if (it == state.sandboxes.end()) return false;
  const SandboxRecord& r = it->second;
  return r.held_sandbox == 0 && !(r.decision && r.decision->verdict == Verdict::kHold);
}

bool outcome_has_intent(const JournalState& state, const Event& e) {
  if (state.pending_intents.contains(e.ref_seq)) return true;
  auto it = state.sandboxes.find(e.uid);
  return it != state.sandboxes.end() && it->second.refused &&
         it->second.refused->intent.seq == e.ref_seq;
}

const RefusedIntent* find_refused(const JournalState& state, int64_t intent_seq) {
  for (const auto& [uid, r] : state.sandboxes) {
    if (r.refused && r.refused->intent.seq == intent_seq) return &*r.refused;
  }
  return nullptr;
}

Result<std::vector<Event>> plan_outcome(const JournalState& state, int64_t intent_seq,
                                        const SuspendOutcome& outcome, const IntentRecord* known) {
  const IntentRecord* intent = nullptr;
  if (auto it = state.pending_intents.find(intent_seq); it != state.pending_intents.end()) {
    intent = &it->second;
  } else if (const RefusedIntent* refused = find_refused(state, intent_seq)) {
    // The same refusal again appends nothing (`outcome` is as stored).
    if (outcome == refused->outcome) return std::vector<Event>{};
    intent = &refused->intent;
  } else if (known && known->seq == intent_seq && outcome.outcome == Outcome::kApplied) {
    intent = known;  // settled otherwise, but an object carries it: applied after all
  } else {
    return Status::InvalidArgument("journal seq " + std::to_string(intent_seq) +
                                   " is neither a pending nor a refused intent");
  }
  Event e;
  e.ns = intent->ns;
  e.name = intent->name;
  e.uid = intent->uid;
  e.ref_seq = intent_seq;
  e.body = outcome;
  std::vector<Event> events;
  events.push_back(std::move(e));
  return events;
}

std::vector<Event> plan_dry_run_outcome(const JournalState& state, const Evaluation& eval) {
  if (eval.decision.action != Action::kRecordDryRun) return {};
  auto it = state.sandboxes.find(eval.snapshot.sandbox.uid);
  if (it == state.sandboxes.end() || !it->second.history.pending_intent_seq) return {};
  auto planned =
      plan_outcome(state, *it->second.history.pending_intent_seq,
                   {Outcome::kDryRun, std::nullopt, "enforcement is off: nothing sent"}, nullptr);
  return planned.ok() ? std::move(*planned) : std::vector<Event>{};
}

std::vector<Event> plan_forget(const JournalState& state, const std::string& uid,
                               const std::string& detail) {
  auto it = state.sandboxes.find(uid);
  if (it == state.sandboxes.end()) return {};
  const SandboxRecord& r = it->second;
  std::vector<Event> events;
  auto subject = [&](EventBody body, int64_t ref_seq) {
    Event e;
    e.ns = r.ns.str();
    e.name = r.name.str();
    e.uid = uid;
    e.ref_seq = ref_seq;
    e.body = std::move(body);
    events.push_back(std::move(e));
  };
  // A PATCH of a pending intent carries the old object's resourceVersion, so
  // it can never land on a sandbox that is gone or re-created: superseded.
  for (const auto& [seq, intent] : state.pending_intents) {
    if (intent.uid == uid)
      subject(SuspendOutcome{Outcome::kSuperseded, std::nullopt, "sandbox deleted: " + detail},
              seq);
  }
  subject(Forgotten{detail}, 0);
  return events;
}

std::vector<Event> plan_observed_after_outcome(const JournalState& state, Evaluation eval) {
  eval.snapshot.history = history_for(state, eval.snapshot.sandbox.uid);
  eval.decision = decide(eval.snapshot);
  if (eval.decision.action != Action::kNone) return {};
  return plan_events(state, eval);
}

}  // namespace fk::domain
