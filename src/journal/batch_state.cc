#include "journal/batch_state.h"

#include <utility>

#include "domain/fold.h"

namespace fk::journal {
using namespace fk::domain;

BatchState::BatchState(const JournalState& committed) : committed_(committed) {
  scratch_.last_seq = committed.last_seq;
}

void BatchState::ImportFence(const FenceKey& key) {
  if (!imported_fences_.insert(key).second) return;
  if (auto it = committed_.fences.find(key); it != committed_.fences.end())
    scratch_.fences.insert(*it);
}

void BatchState::ImportSandbox(const std::string& uid) {
  if (!imported_sandboxes_.insert(uid).second) return;
  if (auto it = committed_.sandboxes.find(uid); it != committed_.sandboxes.end())
    scratch_.sandboxes.insert(*it);
}

void BatchState::ImportIntent(int64_t seq) {
  if (!imported_intents_.insert(seq).second) return;
  if (auto it = committed_.pending_intents.find(seq); it != committed_.pending_intents.end()) {
    scratch_.pending_intents.insert(*it);
    ImportSandbox(it->second.uid);
  }
}

const JournalState& BatchState::For(const Evaluation& eval) {
  const SandboxObservation& sb = eval.snapshot.sandbox;
  ImportFence({sb.ns, kWorkloadPolicyName});
  ImportFence({sb.ns, kSupervisorPolicyName});
  ImportSandbox(sb.uid);
  return scratch_;
}

const JournalState& BatchState::For(const std::vector<Event>& events) {
  for (const Event& e : events) {
    if (const auto* f = std::get_if<FenceObserved>(&e.body)) {
      ImportFence({e.ns, f->policy});
    } else if (e.kind() == EventKind::kForgotten) {
      ForSandbox(e.uid);
    } else if (AboutASandbox(e.kind())) {
      ImportSandbox(e.uid);
    }
    if (e.kind() == EventKind::kSuspendOutcome) ImportIntent(e.ref_seq);
  }
  return scratch_;
}

const JournalState& BatchState::ForSandbox(const std::string& uid) {
  ImportSandbox(uid);
  for (const auto& [seq, intent] : committed_.pending_intents) {
    if (intent.uid == uid) ImportIntent(seq);
  }
  return scratch_;
}

const JournalState& BatchState::ForIntent(int64_t seq) {
  ImportIntent(seq);
  if (!scratch_.pending_intents.contains(seq)) {
    // A refused intent is found through its sandbox, which only a scan names.
    for (const auto& [uid, r] : committed_.sandboxes) {
      if (r.refused && r.refused->intent.seq == seq) ImportSandbox(uid.str());
    }
  }
  return scratch_;
}

void BatchState::Fold(const Event& e) {
  if (const auto* f = std::get_if<FenceObserved>(&e.body)) {
    ImportFence({e.ns, f->policy});
    changed_fences_.insert({e.ns, f->policy});
  } else if (AboutASandbox(e.kind())) {
    ImportSandbox(e.uid);
    changed_sandboxes_.insert(e.uid);
  }
  if (e.kind() == EventKind::kForgotten) {
    // Forgetting drops the sandbox's pending intents: each must be here to be
    // dropped from the committed state too.
    ForSandbox(e.uid);
    for (const auto& [seq, intent] : scratch_.pending_intents) {
      if (intent.uid == e.uid) changed_intents_.insert(seq);
    }
  }
  if (e.kind() == EventKind::kSuspendOutcome) {
    ImportIntent(e.ref_seq);
    changed_intents_.insert(e.ref_seq);
  }
  if (e.kind() == EventKind::kSuspendIntent) {
    imported_intents_.insert(e.seq);
    changed_intents_.insert(e.seq);
  }
  fold(scratch_, e);
}

void BatchState::MergeInto(JournalState& committed) && {
  for (const FenceKey& key : changed_fences_)
    committed.fences[key] = std::move(scratch_.fences.at(key));
  for (const std::string& uid : changed_sandboxes_) {
    std::optional<NamespacedName> before;
    if (auto old = committed.sandboxes.find(uid); old != committed.sandboxes.end())
      before = NamespacedName{old->second.ns, old->second.name};
    if (auto it = scratch_.sandboxes.find(uid); it != scratch_.sandboxes.end()) {
      // The snapshot was for the projection row, written by now; the
      // committed state keeps its digest only.
      it->second.observation.reset();
      committed.sandboxes.insert_or_assign(it->first, std::move(it->second));
    } else if (auto gone = committed.sandboxes.find(uid); gone != committed.sandboxes.end()) {
      committed.sandboxes.erase(gone);
    }
    reindex_sandbox(committed, uid, before);
  }
  for (int64_t seq : changed_intents_) {
    if (auto it = scratch_.pending_intents.find(seq); it != scratch_.pending_intents.end()) {
      committed.pending_intents[seq] = std::move(it->second);
    } else {
      committed.pending_intents.erase(seq);
    }
  }
  committed.last_seq = scratch_.last_seq;
}

}  // namespace fk::journal
