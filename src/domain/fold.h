// fold(): the single definition of what the journal's events mean. The
// journal runs it to keep its projection tables, the reconciler reads the
// result, and replay re-runs it from the first event. Pure: no I/O, no clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "domain/event.h"
#include "domain/journal_state.h"

namespace fk::domain {

// Keeps uids_by_name in step with `sandboxes` for one uid: call after the
// record was added, renamed or erased; `before` is its (ns, name) before
// (nullopt if it was not there).
void reindex_sandbox(JournalState& state, const std::string& uid,
                     const std::optional<NamespacedName>& before);

// The uids the journal remembers under (ns, name), in order.
std::vector<CompactString> uids_named(const JournalState& state, const NamespacedName& name);

// Applies one event. Events must arrive in seq order. A `forgotten` event
// removes the sandbox (its uid) from every map.
void fold(JournalState& state, const Event& event);

// The journal's record of past suspends for a sandbox UID (empty if unknown).
SuspendHistory history_for(const JournalState& state, const std::string& sandbox_uid);

// Seeds SandboxRecord::held_sandbox from a record loaded from the projection.
void seed_held_sandbox(SandboxRecord& record);

}  // namespace fk::domain
