// A digest of an observation: what a live journal keeps of a sandbox's latest
// sandbox_observed instead of the snapshot itself (issue 20: the snapshot was
// 1.4 KB of every sandbox's record). plan_events only ever asks "are these the
// same objects as last time?" and starts_hold_episode "is this the same
// sandbox object?", which a digest answers; the log lines name the fence
// generations, which it keeps as they are.
//
// Digests live in memory only (never written, recomputed from the projection
// on open), so they need not be stable across builds.
#pragma once

#include <cstdint>
#include <optional>

#include "domain/observation.h"

namespace fk::domain {

struct ObservedDigest {
  uint64_t objects = 0;  // ObjectsDigest(snapshot): every field but the time
  uint64_t sandbox = 0;  // SandboxDigest(snapshot.sandbox)
  // When it was observed: not compared by planning (time alone is no
  // change), but part of the record, so `journal verify` still tells a
  // projection row from the events that differs only in its time.
  int64_t observed_at_ms = 0;
  std::optional<int64_t> fence_from;  // the generation the sandbox was admitted under
  std::optional<int64_t> fence_to;    // the workload fence's generation, if present
  bool operator==(const ObservedDigest&) const = default;
};

// Equal for two snapshots that SameObjects() calls the same; different,
// except with probability 2^-64, for two it does not.
uint64_t ObjectsDigest(const Snapshot& s);
uint64_t SandboxDigest(const SandboxObservation& sb);
ObservedDigest DigestOf(const Snapshot& s);

}  // namespace fk::domain
