#include <algorithm>

#include "domain/journal_state.h"

namespace fk::domain {
namespace {

SandboxRecord& RecordFor(JournalState& state, const Event& e) {
  auto [it, added] = state.sandboxes.try_emplace(e.uid);
  SandboxRecord& r = it->second;
  std::optional<JournalState::NameKey> before;
  if (!added) before = JournalState::NameKey{r.ns, r.name};
  r.uid = e.uid;
  r.ns = e.ns;  // a sandbox keeps its uid; name and namespace follow the newest event
  r.name = e.name;
  r.updated_at = e.recorded_at;
  if (added || before->first != r.ns || before->second != r.name)
    reindex_sandbox(state, e.uid, before);
  return r;
}

struct Folder {
  JournalState& state;
  const Event& e;

  void operator()(const Leadership&) {}  // audit only: no decision depends on it
  void operator()(const Pruned&) {}      // what went is in the base state already

  void operator()(const FenceObserved& f) {
    FenceRecord& r = state.fences[{e.ns, f.policy}];
    std::map<std::string, int64_t> seen = std::move(r.max_generation);
    r = FenceRecord{e.ns, f.policy, f.observation, e.seq, e.recorded_at, std::move(seen)};
    if (f.observation.present) {
      int64_t& g = r.max_generation[f.observation.uid];
      g = std::max(g, f.observation.generation);
    }
  }
  void operator()(const SandboxObserved& o) {
    SandboxRecord& r = RecordFor(state, e);
    r.observation = o.snapshot;
    r.observation_seq = e.seq;
  }
  void operator()(const Decided& d) {
    SandboxRecord& r = RecordFor(state, e);
    r.decision = d.decision;
    r.decision_seq = e.seq;
    // A hold over a sandbox other than the one the last episode began with begins one.
    if (d.decision.verdict == Verdict::kHold && r.observation &&
        r.held_sandbox != r.observation->sandbox)
      r.held_sandbox = r.observation->sandbox;
  }
  void operator()(const Forgotten&) {
    if (auto it = state.sandboxes.find(e.uid); it != state.sandboxes.end()) {
      const JournalState::NameKey before{it->second.ns, it->second.name};
      state.sandboxes.erase(it);
      reindex_sandbox(state, e.uid, before);
    }
    std::erase_if(state.pending_intents, [&](const auto& p) { return p.second.uid == e.uid; });
  }
  void operator()(const SuspendIntent& i) {
    SandboxRecord& r = RecordFor(state, e);
    r.history.pending_intent_seq = e.seq;
    r.refused.reset();  // a new intent is recorded only when something changed
    state.pending_intents[e.seq] = IntentRecord{e.seq, e.ns, e.name, e.uid, i};
  }
  void operator()(const SuspendOutcome& o) {
    std::optional<IntentRecord> intent;
    if (auto it = state.pending_intents.find(e.ref_seq); it != state.pending_intents.end()) {
      intent = it->second;
      state.pending_intents.erase(it);
    }
    SandboxRecord& r = RecordFor(state, e);
    if (r.history.pending_intent_seq == e.ref_seq) r.history.pending_intent_seq.reset();
    // A refused intent that was sent again gets a later outcome of its own.
    if (r.refused && r.refused->intent.seq == e.ref_seq) {
      intent = r.refused->intent;
      r.refused.reset();
    }
    if (o.outcome == Outcome::kFailed && intent) r.refused = RefusedIntent{*intent, o};
    // Only an applied suspend blocks later PATCHes; conflict, failed and
    // superseded leave the sandbox free to be decided again.
    if (o.outcome == Outcome::kApplied && o.applied_generation) {
      r.history.applied_generation = std::max(
          r.history.applied_generation.value_or(*o.applied_generation), *o.applied_generation);
    }
  }
};

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
  return a == b_at_a_time;
}

void reindex_sandbox(JournalState& state, const std::string& uid,
                     const std::optional<JournalState::NameKey>& before) {
  if (before) {
    auto it = state.uids_by_name.find(*before);
    if (it != state.uids_by_name.end()) {
      it->second.erase(uid);
      if (it->second.empty()) state.uids_by_name.erase(it);
    }
  }
  if (auto r = state.sandboxes.find(uid); r != state.sandboxes.end())
    state.uids_by_name[{r->second.ns, r->second.name}].insert(uid);
}

void fold(JournalState& state, const Event& event) {
  std::visit(Folder{state, event}, event.body);
  state.last_seq = std::max(state.last_seq, event.seq);
}

SuspendHistory history_for(const JournalState& state, const std::string& sandbox_uid) {
  auto it = state.sandboxes.find(sandbox_uid);
  return it == state.sandboxes.end() ? SuspendHistory{} : it->second.history;
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
      rec.observation && SameObjects(*rec.observation, eval.snapshot) && rec.decision &&
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
  const bool patch = eval.decision.action == Action::kPatchSuspend;
  auto it = state.sandboxes.find(sb.uid);
  const SandboxRecord* rec = it == state.sandboxes.end() ? nullptr : &it->second;
  // The observation time is not a change by itself, and neither is a note
  // (it may say how long ago a bootstrap started). A decision that changes
  // only because time passed (an admitting sandbox whose grace ended) is a
  // change: then the observation is recorded again, carrying the new time, so
  // replay re-decides it at that time.
  const bool observation_changed =
      !rec || !rec->observation || !SameObjects(*rec->observation, eval.snapshot);
  const bool decision_changed =
      !rec || !rec->decision || !rec->decision->SameOutcome(eval.decision);
  if (observation_changed || decision_changed || patch) {
    out.push_back(Subject(sb, SandboxObserved{eval.snapshot}));
    out.push_back(Subject(sb, Decided{eval.decision}));
  }
  if (patch) {
    out.push_back(
        Subject(sb, SuspendIntent{eval.decision.reason, sb.generation, eval.resource_version,
                                  sb.api_version, eval.decision.note, eval.writer}));
  }
  return out;
}

void seed_held_sandbox(SandboxRecord& record) {
  if (record.decision && record.decision->verdict == Verdict::kHold && record.observation)
    record.held_sandbox = record.observation->sandbox;
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

bool starts_hold_episode(const JournalState& state, const Evaluation& eval) {
  if (eval.decision.verdict != Verdict::kHold) return false;
  const SandboxObservation& sb = eval.snapshot.sandbox;
  auto it = state.sandboxes.find(sb.uid);
  if (it == state.sandboxes.end()) return true;  // first seen held
  const SandboxRecord& r = it->second;
  if (r.decision && r.decision->verdict == Verdict::kHold) return false;  // the episode goes on
  if (r.held_sandbox == sb) return false;  // the same sandbox, held again: the same episode
  return !OwnSuspension(r, sb);
}

}  // namespace fk::domain
