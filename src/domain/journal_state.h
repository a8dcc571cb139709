// State folded from journal events, and the pure planning of which events an
// evaluation must append.
//
// fold() is the single definition of what the events mean: the journal runs
// it to keep its projection tables, the reconciler reads the result, and
// replay re-runs it from the first event. plan_events() is where "the journal
// grows with changes, not with time" is decided: an evaluation whose inputs
// and decision are unchanged plans nothing.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "domain/decision.h"
#include "domain/event.h"
#include "domain/observation.h"

namespace fk::domain {

struct FenceRecord {
  std::string ns;
  std::string policy;
  PolicyObservation observation;
  int64_t seq = 0;  // the fence_observed event that set it
  std::string updated_at;
  // The highest generation recorded per policy uid: generations only grow, so
  // a snapshot holding a uid at a lower one is an older copy and is not
  // recorded (the fence never goes backwards, not even after the record moved
  // to another uid or to "absent" in between). Folded from the events this
  // process saw, seeded at start from the projection's latest record: a
  // restarted process lists afresh, so it holds no copy older than that.
  // Memory, not state: equality ignores it.
  std::map<std::string, int64_t> max_generation;
  bool operator==(const FenceRecord& o) const {
    return ns == o.ns && policy == o.policy && observation == o.observation && seq == o.seq &&
           updated_at == o.updated_at;
  }
};

struct IntentRecord {
  int64_t seq = 0;
  std::string ns, name, uid;
  SuspendIntent intent;
  bool operator==(const IntentRecord&) const = default;
};

// The sandbox's latest intent whose latest outcome is `failed` (a definite
// refusal: 403, 422, a webhook's denial), with that outcome. While the sandbox
// and the decision stay the same, a retry re-sends this intent's PATCH (same
// seq, same precondition) instead of recording a new intent, and an identical
// refusal is not recorded again: a refusal that persists appends nothing.
struct RefusedIntent {
  IntentRecord intent;
  SuspendOutcome outcome;
  bool operator==(const RefusedIntent&) const = default;
};

struct SandboxRecord {
  std::string ns, name, uid;
  std::optional<Snapshot> observation;  // latest sandbox_observed
  int64_t observation_seq = 0;
  std::optional<Decision> decision;  // latest decided
  int64_t decision_seq = 0;
  SuspendHistory history;
  std::optional<RefusedIntent> refused;
  std::string updated_at;
  // The sandbox object as observed when its latest hold episode began
  // (starts_hold_episode): while it stays so, a hold decided again after a
  // non-hold one (a cache that showed an older fence, then caught up) goes on
  // with the same episode. Folded from the events this process saw, seeded at
  // start from the projection when the latest decision is a hold (as
  // FenceRecord::max_generation). Memory, not state: equality ignores it.
  std::optional<SandboxObservation> held_sandbox;
  bool operator==(const SandboxRecord& o) const {
    return ns == o.ns && name == o.name && uid == o.uid && observation == o.observation &&
           observation_seq == o.observation_seq && decision == o.decision &&
           decision_seq == o.decision_seq && history == o.history && refused == o.refused &&
           updated_at == o.updated_at;
  }
};

// Seeds SandboxRecord::held_sandbox from a record loaded from the projection.
void seed_held_sandbox(SandboxRecord& record);

struct JournalState {
  using NameKey = std::pair<std::string, std::string>;  // (ns, name)
  std::map<NameKey, FenceRecord> fences;                // (ns, policy)
  std::map<std::string, SandboxRecord> sandboxes;       // by uid
  std::map<int64_t, IntentRecord> pending_intents;      // by intent seq
  // The uids of `sandboxes` by (ns, name): more than one when a name was
  // deleted and re-created and the old uid is not forgotten yet.
  std::map<NameKey, std::set<std::string>> uids_by_name;
  int64_t last_seq = 0;
  bool operator==(const JournalState&) const = default;
};

// Keeps uids_by_name in step with `sandboxes` for one uid: call after the
// record was added, renamed or erased; `before` is its (ns, name) before
// (nullopt if it was not there).
void reindex_sandbox(JournalState& state, const std::string& uid,
                     const std::optional<JournalState::NameKey>& before);

// Applies one event. Events must arrive in seq order. A `forgotten` event
// removes the sandbox (its uid) from every map.
void fold(JournalState& state, const Event& event);

// The journal's record of past suspends for a sandbox UID (empty if unknown).
SuspendHistory history_for(const JournalState& state, const std::string& sandbox_uid);

// One evaluation of one sandbox: the snapshot decided on, the decision, and
// the resourceVersion a PATCH would carry.
struct Evaluation {
  Snapshot snapshot;
  Decision decision;
  std::string resource_version;
  std::string writer = {};  // the writer id an intent issued by this evaluation carries
};

// The refused intent an evaluation re-drives instead of recording a new one:
// set when the evaluation is to PATCH, its observation and decision are the
// recorded ones, and the intent it would record equals the refused one
// (reason, observed generation, precondition, API version).
std::optional<IntentRecord> refused_to_retry(const JournalState& state, const Evaluation& eval);

// The events (without seq/time) that record this evaluation: changed fence
// observations, the sandbox observation and decision if either changed, and
// the intent when the decision is to PATCH — unless refused_to_retry() names
// an intent to send again. Empty when nothing changed.
// "Changed" ignores the snapshot's observed_at_ms (SameObjects) and the
// decision's note (SameOutcome): time passing alone records nothing, unless
// it changes the decision.
std::vector<Event> plan_events(const JournalState& state, const Evaluation& eval);

// Whether recording this evaluation starts a hold episode that deserves a
// FailClosedHeld Event (docs/design.md#held-sandboxes): the decision is a hold;
// the journal's latest decision for this uid was not (none at all counts as
// "not"), and the sandbox object differs from the one its last hold episode
// began with (a hold, a flip to healthy on a cache showing an older fence,
// and a hold again, with the sandbox itself unchanged, is one episode); and
// the suspension being held is not one fencekeeper applied itself — a
// suspend applied at the observed generation or later means the spec is
// still ours, and its Warning Event already said why; a suspend still pending
// may be ours too (landed, its outcome not journaled yet). A restart reads the
// hold back from the journal, so it starts no episode.
bool starts_hold_episode(const JournalState& state, const Evaluation& eval);

}  // namespace fk::domain
