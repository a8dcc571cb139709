// The state one group-commit batch is planned against: the committed state
// plus the events of the batch's earlier members, built without copying the
// committed state and without changing it before COMMIT.
//
// A record is copied from the committed state into a scratch state the first
// time the batch needs it (the For* calls); a plan then runs against the
// scratch state, which holds every record that plan looks at (plan_events
// reads the namespace's two fences and the sandbox's record; an outcome reads
// its intent and sandbox). Fold() applies an appended event to the scratch
// state and remembers what it touched, so that the projections are rewritten
// for exactly those records and MergeInto() changes exactly those in the
// committed state, after COMMIT. A batch that fails is simply dropped.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "domain/journal_state.h"
#include "domain/plan.h"

namespace fk::journal {

class BatchState {
 public:
  using FenceKey = std::pair<std::string, std::string>;  // (namespace, policy)

  explicit BatchState(const domain::JournalState& committed);

  // The state to plan this evaluation against (plan_events, refused_to_retry).
  const domain::JournalState& For(const domain::Evaluation& eval);
  // The state to check and fold these events against.
  const domain::JournalState& For(const std::vector<domain::Event>& events);
  // The state holding this sandbox's record and every pending intent it has.
  const domain::JournalState& ForSandbox(const std::string& uid);
  // The state holding intent `seq` (pending, or the refused intent of a sandbox).
  const domain::JournalState& ForIntent(int64_t seq);

  // Applies one appended event (seq and time set, in seq order).
  void Fold(const domain::Event& event);

  const domain::JournalState& scratch() const { return scratch_; }
  // The fence records and sandbox uids the folded events changed (a changed
  // uid absent from scratch() was forgotten).
  const std::set<FenceKey>& changed_fences() const { return changed_fences_; }
  const std::set<std::string>& changed_sandboxes() const { return changed_sandboxes_; }

  // Applies every change to `committed` (the state this batch was built on),
  // moving the changed records out of the batch: call it last.
  void MergeInto(domain::JournalState& committed) &&;

 private:
  void ImportFence(const FenceKey& key);
  void ImportSandbox(const std::string& uid);
  void ImportIntent(int64_t seq);

  const domain::JournalState& committed_;
  domain::JournalState scratch_;
  // What was copied already: a record the batch erased must not come back.
  std::set<FenceKey> imported_fences_;
  std::set<std::string> imported_sandboxes_;
  std::set<int64_t> imported_intents_;
  std::set<FenceKey> changed_fences_;
  std::set<std::string> changed_sandboxes_;
  std::set<int64_t> changed_intents_;
};

}  // namespace fk::journal
