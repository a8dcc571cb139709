// A digest of an observation: what a live journal keeps of a sandbox's latest
// sandbox_observed instead of the snapshot itself (about 1.4 KB of every
// sandbox's record). plan_events only ever asks "are these the
// same objects as last time?" and starts_hold_episode "is this the same
// sandbox object?", which a digest answers; the log lines name the fence
// generations, which it keeps as they are.
//
// Digests live in memory only (never written, recomputed from the projection
// on open), so they need not be stable across builds.
#pragma once

#include <cstdint>
#include <optional>

#include "common/packed_optional.h"
#include "domain/observation.h"

namespace fk::domain {

struct ObservedDigest {
  uint64_t objects = 0;  // ObjectsDigest(snapshot): every field but the time
  uint64_t sandbox = 0;  // SandboxDigest(snapshot.sandbox)
  // When it was observed: not compared by planning (time alone is no
  // change), but part of the record, so `journal verify` still tells a
  // projection row from the events that differs only in its time.
  int64_t observed_at_ms = 0;

  // The generation the sandbox was admitted under, and the workload fence's,
  // if present: the fence generations a log line names.
  std::optional<int64_t> fence_from() const {
    return has_from_ ? std::optional<int64_t>(from_) : std::nullopt;
  }
  std::optional<int64_t> fence_to() const {
    return has_to_ ? std::optional<int64_t>(to_) : std::nullopt;
  }
  void set_fence(std::optional<int64_t> from, std::optional<int64_t> to) {
    has_from_ = from.has_value();
    from_ = from.value_or(0);
    has_to_ = to.has_value();
    to_ = to.value_or(0);
  }
  bool operator==(const ObservedDigest&) const = default;

 private:
  // Two flags beside two numbers, not two std::optionals: 48 bytes, not 56,
  // in every sandbox's journal record (an absent number is kept as 0, so
  // equality stays member-wise).
  int64_t from_ = 0, to_ = 0;
  bool has_from_ = false, has_to_ = false;
};

// Equal for two snapshots that SameObjects() calls the same; different,
// except with probability 2^-64, for two it does not.
uint64_t ObjectsDigest(const Snapshot& s);
uint64_t SandboxDigest(const SandboxObservation& sb);
ObservedDigest DigestOf(const Snapshot& s);

}  // namespace fk::domain

// A digest never observed at the most negative millisecond: that time marks
// an absent one, so a record's optional digest is 48 bytes, not 56.
template <>
struct fk::Niche<fk::domain::ObservedDigest> {
  static fk::domain::ObservedDigest None() {
    fk::domain::ObservedDigest d;
    d.observed_at_ms = Niche<int64_t>::None();
    return d;
  }
  static bool IsNone(const fk::domain::ObservedDigest& d) {
    return Niche<int64_t>::IsNone(d.observed_at_ms);
  }
};
