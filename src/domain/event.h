// Journal events: what fencekeeper saw, decided and did, in the order it
// happened. The journal stores them append-only; fold() rebuilds state from
// them; replay reads them back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "domain/decision.h"
#include "domain/enforcement.h"
#include "domain/observation.h"

namespace fk::domain {

enum class EventKind {
  kFenceObserved,    // a namespace policy changed (uid, generation, intactness, presence)
  kSandboxObserved,  // the decision input of one sandbox changed
  kDecided,          // decide() over the sandbox's latest observation
  kSuspendIntent,    // write-ahead: a suspend PATCH is about to be sent
  kSuspendOutcome,   // what became of an intent (ref_seq names the intent)
  kLeadership,       // this instance acquired, lost or released the lease (subject: the Lease)
  kForgotten,        // the sandbox (this uid) is gone from the cluster: it leaves the projections
  kPruned,           // retention removed the oldest events (subject: the journal itself)
  kWriterStarted,    // a `run` process started appending, and how it enforces (subject: the writer)
};

// kDryRun: recorded with its intent in one commit, for a namespace where
// enforcement is off; nothing was sent.
enum class Outcome { kPending, kApplied, kConflict, kFailed, kSuperseded, kDryRun };

inline constexpr const char* kWorkloadPolicyName = "openshell-sandbox-workloads";
inline constexpr const char* kSupervisorPolicyName = "openshell-sandbox-supervisors";

struct FenceObserved {
  std::string policy;  // NetworkPolicy name
  PolicyObservation observation;
  bool operator==(const FenceObserved&) const = default;
};

struct SandboxObserved {
  Snapshot snapshot;
  bool operator==(const SandboxObserved&) const = default;
};

// The decision over the latest sandbox_observed event of the same sandbox.
struct Decided {
  Decision decision;
  bool operator==(const Decided&) const = default;
};

struct SuspendIntent {
  Reason reason = Reason::kNone;
  int64_t observed_generation = 0;
  std::string resource_version;  // the PATCH's precondition
  ApiVersion api_version = ApiVersion::kV1beta1;
  std::string note;
  // The writer id of the `run` process that issued it, sent with the seq in
  // the PATCH: a seq is unique only inside one journal, the pair is unique
  // across journals. "" for intents journaled before writer ids existed.
  std::string writer = {};
  bool operator==(const SuspendIntent&) const = default;
};

struct SuspendOutcome {
  Outcome outcome = Outcome::kApplied;
  // metadata.generation of the object the PATCH returned (or, for an intent
  // resolved after a crash, the generation seen when it was confirmed).
  std::optional<int64_t> applied_generation;
  std::string detail;
  bool operator==(const SuspendOutcome&) const = default;
};

struct Leadership {
  std::string identity;
  std::string state;  // acquired, lost, released
  bool operator==(const Leadership&) const = default;
};

// The sandbox with this uid was deleted from the cluster (or its name now
// belongs to a new uid). It leaves the projections and the journal's memory;
// its events stay. A sandbox re-created under the same name has a new uid and
// starts a fresh history.
struct Forgotten {
  std::string detail;  // how fencekeeper learned it is gone
  bool operator==(const Forgotten&) const = default;
};

// Retention removed events [first_seq, last_seq] (their rows, `rows` of them,
// recorded from first_at_ms to last_at_ms): what went, and the chain head at
// the cut — the hash of the last row removed ("" when it carried none), which
// the first row kept is chained to. `archive` names the file they were
// written to first ("" without --journal-archive). No decision depends on the
// events removed: the journal's base state (table journal_base) holds what
// they folded to.
struct Pruned {
  int64_t first_seq = 0;
  int64_t last_seq = 0;
  int64_t rows = 0;
  int64_t first_at_ms = 0;
  int64_t last_at_ms = 0;
  int64_t head_seq = 0;
  std::string head_hash;
  std::string archive;
  bool operator==(const Pruned&) const = default;
};

// A `run` process started appending to this journal (schema 11): the first
// row it appends, chained like every row, so that `journal verify` proves
// which enforcement was in force for the rows after it (the table
// writer_starts repeats it as an index and is checked against it).
struct WriterStarted {
  std::string writer;  // the writer id
  Enforcement enforcement;
  bool operator==(const WriterStarted&) const = default;
};

using EventBody = std::variant<FenceObserved, SandboxObserved, Decided, SuspendIntent,
                               SuspendOutcome, Leadership, Forgotten, Pruned, WriterStarted>;

struct Event {
  int64_t seq = 0;          // assigned by the journal
  std::string recorded_at;  // RFC 3339 UTC, assigned by the journal
  // The subject: a sandbox (ns, name, uid) or, for fence events, the namespace.
  std::string ns;
  std::string name;
  std::string uid;
  int64_t ref_seq = 0;  // for an outcome: the intent's seq; otherwise 0
  EventBody body;

  EventKind kind() const { return static_cast<EventKind>(body.index()); }
  bool operator==(const Event&) const = default;
};

// Whether events of this kind are about one sandbox (their subject is it):
// not fences, leadership, retention's records or run starts.
inline bool AboutASandbox(EventKind k) {
  return k == EventKind::kSandboxObserved || k == EventKind::kDecided ||
         k == EventKind::kSuspendIntent || k == EventKind::kSuspendOutcome ||
         k == EventKind::kForgotten;
}

const char* ToString(EventKind k);
const char* ToString(Outcome o);
std::optional<EventKind> ParseEventKind(const std::string& s);
std::optional<Outcome> ParseOutcome(const std::string& s);

}  // namespace fk::domain
