// What the reconciler observed about one sandbox, as plain values.
//
// These types are the input of decide(). They are built at the edge (parsing
// Kubernetes JSON lives in src/kube/objects.*); every malformed input has
// already been mapped to a defined value here, so decide() never sees JSON and
// never fails. Only decision-relevant fields are kept: two observations that
// compare equal lead to the same decision, which is what lets the journal skip
// unchanged observations.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/packed_optional.h"
#include "domain/effective_fence.h"

namespace fk::domain {

// The port an intact workload fence admits (OpenShell's default), unless
// `run --boundary-port` says otherwise.
inline constexpr int kDefaultBoundaryPort = 5500;

enum class ApiVersion { kV1beta1, kV1alpha1 };

// openshell.ai/sandbox-runtime-bootstrap-operation. kOther covers a value we
// do not know; it never lets a sandbox run.
enum class BootstrapOp { kNone, kCreate, kRestart, kStop, kOther };

struct SandboxObservation {
  std::string ns;
  std::string name;
  std::string uid;
  int64_t generation = 0;  // metadata.generation
  ApiVersion api_version = ApiVersion::kV1beta1;
  bool deleting = false;  // metadata.deletionTimestamp is set
  // An unassigned warm-pool pair: labelled openshell.ai/warm-pool, without a
  // sandbox id. OpenShell prepares and retires spares itself and never
  // suspends one (row 1b).
  bool spare = false;
  // Desired mode. Only an explicit Suspended (v1beta1, any case) or an integer
  // replicas <= 0 (v1alpha1) is "not running"; everything else fails closed.
  bool should_run = true;
  bool bootstrapping = false;  // bootstrapping annotation is exactly "true"
  BootstrapOp bootstrap_op = BootstrapOp::kNone;
  // openshell.ai/sandbox-runtime-bootstrap-phase as written ("" if absent).
  // Kept raw: only "preparing" matters (row 1a), and any other value simply
  // does not admit, so there is nothing to map.
  std::string bootstrap_phase;
  // openshell.ai/sandbox-runtime-bootstrap-started-at-ms. nullopt = missing or
  // not plain base-10 digits, which never admits (row 1a).
  std::optional<int64_t> bootstrap_started_at_ms;
  // Admission record. nullopt = annotation missing, or (for the generation)
  // not plain base-10 digits; either way a mismatch.
  std::optional<std::string> fence_uid;
  std::optional<int64_t> fence_generation;
  std::optional<std::string> workload_uid;
  std::optional<std::string> supervisor_uid;

  bool operator==(const SandboxObservation&) const = default;
};

// One of the two namespace NetworkPolicies. The supervisor policy's is
// recorded but decides nothing: it only allows supervisor egress
// (docs/design.md#the-supervisor-policy).
struct PolicyObservation {
  bool present = false;
  std::string uid;         // metadata.uid (empty when absent)
  int64_t generation = 0;  // metadata.generation (0 when absent)
  bool intact = false;     // spec equals the intended one (false when absent)

  bool operator==(const PolicyObservation&) const = default;
};

struct PodObservation {
  bool present = false;
  std::string uid;
  // spec.schedulingGates is a non-empty list: the pod cannot be scheduled, so
  // its workload cannot run yet. OpenShell removes the gates only after it has
  // written the fence annotations (row 1a reads this for the workload pod).
  bool scheduling_gated = false;

  bool operator==(const PodObservation&) const = default;
};

// What the journal says about past suspend transitions of one sandbox UID.
// It is folded from journal events (see fold.h) and is part of the decision
// input: the intent rule (docs/design.md#the-journal-derived-intent-rule) reads it.
// Packed optionals (8 bytes each, not 16): every sandbox's journal record and
// snapshot holds one.
struct SuspendHistory {
  PackedOptional<int64_t> pending_intent_seq;  // an intent with no outcome yet
  PackedOptional<int64_t> applied_generation;  // highest generation a suspend was applied at
  // Highest generation a dry-run intent was recorded at (docs/design.md#audit-before-enforce):
  // it covers a later dry-run suspend verdict as an applied suspend covers a
  // PATCH, and never a real one.
  PackedOptional<int64_t> dry_run_generation;

  bool operator==(const SuspendHistory&) const = default;
};

// Everything decide() needs about one sandbox.
struct Snapshot {
  SandboxObservation sandbox;
  PolicyObservation workload_fence;
  PolicyObservation supervisor_fence;
  PodObservation workload_pod;
  PodObservation supervisor_pod;
  SuspendHistory history;
  // The effective fence: the other policies of the namespace that select the
  // workload (its pod's labels, or its template's while it has none) and
  // widen what it may reach, sorted by name. Empty: the fence holds.
  std::vector<WideningPolicy> bypass;
  // Enforcement is off for the sandbox's namespace in the run that observed
  // it (run --enforcement dry-run, --dry-run-namespace): a suspend verdict
  // records what it would do and sends nothing. Part of the input, so replay
  // --check decides as the run did.
  bool dry_run = false;
  // When the objects above were observed: wall-clock ms since the epoch, set by
  // the caller. Row 1a compares it with the bootstrap start; keeping the time
  // in the input (not a clock call in decide()) is what keeps decide() pure
  // and lets replay re-run it over the recorded observation.
  int64_t observed_at_ms = 0;

  bool operator==(const Snapshot&) const = default;
};

// Equality of the observed objects and history, ignoring observed_at_ms. The
// journal compares observations this way: time passing alone is not a change
// (an idle cluster appends nothing), while a decision that changes because
// time passed is still recorded, because the decision is compared too.
bool SameObjects(const Snapshot& a, const Snapshot& b);

const char* ToString(ApiVersion v);
const char* ToString(BootstrapOp op);
std::optional<ApiVersion> ParseApiVersion(const std::string& s);
std::optional<BootstrapOp> ParseBootstrapOp(const std::string& s);

}  // namespace fk::domain
