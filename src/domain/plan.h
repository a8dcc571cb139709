// The pure planning of what the journal appends: for an evaluation
// (plan_events: where "the journal grows with changes, not with time" is
// decided — an evaluation whose inputs and decision are unchanged plans
// nothing), for an outcome (plan_outcome) and for a deleted sandbox
// (plan_forget). Each plans against a JournalState and returns events
// without seq or time; the journal assigns those and folds them (fold.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "domain/decision.h"
#include "domain/event.h"
#include "domain/journal_state.h"
#include "domain/observation.h"

namespace fk::domain {

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
// hold back from the journal, so it starts no episode. `held_before`: the
// SandboxDigest the last hold episode began with when the state does not
// know it (needs_held_sandbox), as the shell read it back (0: none).
bool starts_hold_episode(const JournalState& state, const Evaluation& eval,
                         uint64_t held_before = 0);

// Whether starts_hold_episode needs the object the sandbox's last hold began
// with and the state has forgotten it: a process that started while the
// latest decision was not a hold keeps no memory of an earlier hold, and
// without it a restart between a hold and its return would begin a new
// episode (and send a second Event) for an unchanged sandbox.
bool needs_held_sandbox(const JournalState& state, const Evaluation& eval);

// Whether the outcome event `e` settles an intent the state knows: a pending
// one, or a refused one that was sent again.
bool outcome_has_intent(const JournalState& state, const Event& e);

// The refused intent `intent_seq` of some sandbox, if it is one.
const RefusedIntent* find_refused(const JournalState& state, int64_t intent_seq);

// The event recording `outcome` of `intent_seq`; none when it repeats the
// refusal already recorded for that intent. `outcome` must be as the journal
// stores it (its text bounded) so that a repeat compares equal. `known`: the
// intent as an object carries it, for an outcome of an intent the state has
// settled otherwise (an applied one is recorded after all). InvalidArgument
// when `intent_seq` is none of these.
Result<std::vector<Event>> plan_outcome(const JournalState& state, int64_t intent_seq,
                                        const SuspendOutcome& outcome, const IntentRecord* known);

// The events recording the sandbox as a suspend PATCH returned it, planned
// against a state that already holds the PATCH's `applied` outcome, so the
// outcome and this observation share one commit (two commits per transition:
// the intent, then this). The snapshot's history and the decision are
// re-derived here from that state: computed before the outcome, they would
// still say "pending", and the next pass would record the change. Empty when
// the decision is to PATCH again: an intent is recorded only by a pass that
// can send it at once.
std::vector<Event> plan_observed_after_outcome(const JournalState& state, Evaluation eval);

// The `dry-run` outcome of the dry-run intent plan_events() recorded for
// `eval` (decision record-dry-run), planned against the state that holds that
// intent, so intent and outcome share one commit: a dry-run intent is never
// pending, and a restart never mistakes it for a PATCH whose answer was lost.
// Empty for any other decision.
std::vector<Event> plan_dry_run_outcome(const JournalState& state, const Evaluation& eval);

// For a sandbox deleted from the cluster: `superseded` for each of its pending
// intents, then `forgotten`. Nothing for a uid the state does not know.
std::vector<Event> plan_forget(const JournalState& state, const std::string& uid,
                               const std::string& detail);

}  // namespace fk::domain
