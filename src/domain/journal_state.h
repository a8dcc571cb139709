// The state folded from journal events (domain/fold.h folds it;
// domain/plan.h plans what to append against it): the fences, the sandboxes
// and the intents still waiting for an outcome.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/compact_string.h"
#include "common/hash_multimap.h"
#include "common/namespaced_name.h"
#include "common/sorted_names.h"
#include "domain/decision.h"
#include "domain/digest.h"
#include "domain/event.h"
#include "domain/heap_optional.h"
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
  // Memory, not state: equality ignores it. A sorted array (usually of one
  // uid, packed): a std::map node and the uid's heap copy would be 128
  // bytes of every fence, two a namespace.
  SortedNames<int64_t> max_generation;
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
  // Packed: kept for every sandbox the journal knows (common/compact_string.h).
  CompactString ns, name, uid;
  // The latest sandbox_observed. `observed` is always kept: a digest of it is
  // all that planning compares. The snapshot itself is kept where it is read:
  // by replay, and by a batch that writes it to the projection; a live journal
  // drops it once that batch commits (memory: it was most of the record).
  std::shared_ptr<const Snapshot> observation;
  PackedOptional<ObservedDigest> observed;
  int64_t observation_seq = 0;
  PackedOptional<Decision> decision;  // latest decided
  int64_t decision_seq = 0;
  SuspendHistory history;
  HeapOptional<RefusedIntent> refused;  // rare: on the heap
  CompactString updated_at;
  // The sandbox object (its SandboxDigest) as observed when its latest hold
  // episode began (starts_hold_episode): while it stays so, a hold decided
  // again after a non-hold one (a cache that showed an older fence, then
  // caught up) goes on with the same episode. Folded from the events this
  // process saw, seeded at start from the projection when the latest decision
  // is a hold (as FenceRecord::max_generation). Memory, not state: equality
  // ignores it. 0: none (a digest of 0, one in 2^64, would only begin an
  // episode that could have gone on; 8 bytes, where an optional took 16).
  uint64_t held_sandbox = 0;
  // Equality is by digest: a record that dropped its snapshot equals one that
  // kept it.
  bool operator==(const SandboxRecord& o) const {
    return ns == o.ns && name == o.name && uid == o.uid && observed == o.observed &&
           observation_seq == o.observation_seq && decision == o.decision &&
           decision_seq == o.decision_seq && history == o.history && refused == o.refused &&
           updated_at == o.updated_at;
  }
};

struct JournalState {
  using NameKey = std::pair<std::string, std::string>;            // (ns, name)
  std::map<NameKey, FenceRecord> fences;                          // (ns, policy)
  std::map<CompactString, SandboxRecord, std::less<>> sandboxes;  // by uid
  std::map<int64_t, IntentRecord> pending_intents;                // by intent seq
  // The uids of `sandboxes` by (ns, name), for uids_named: a name holds more
  // than one uid when it was deleted and re-created and the old uid is not
  // forgotten yet. Keyed by a hash of the name, flat (a set of (name, uid)
  // nodes was 112 bytes of every sandbox at 10,000); what it finds is checked
  // against `sandboxes`. Derived from `sandboxes`, so equality ignores it.
  HashMultimap<CompactString> uids_by_name;
  int64_t last_seq = 0;
  bool operator==(const JournalState& o) const {
    return fences == o.fences && sandboxes == o.sandboxes && pending_intents == o.pending_intents &&
           last_seq == o.last_seq;
  }
};

}  // namespace fk::domain
