// The verdict for one sandbox, and decide(): the decision table
// (docs/design.md#decision-table) plus the journal-derived intent rule. decide() is pure (no I/O,
// no clock: the observation time is part of the Snapshot), which is what makes `replay --check`
// possible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/heap_text.h"
#include "common/packed_optional.h"
#include "domain/observation.h"

namespace fk::domain {

enum class Verdict : uint8_t {
  kIgnore,     // rows 1 and 1b: being deleted, or a spare
  kSuspend,    // rows 2-4: must fail closed
  kHold,       // row 5: already fail-closed behind a bad fence; converged
  kHealthy,    // row 6
  kAdmitting,  // row 1a: OpenShell is installing the fence; the workload cannot run yet
};

// OpenShell's own bootstrap grace (SANDBOX_RUNTIME_BOOTSTRAP_GRACE): a
// bootstrap older than this is stale, so row 1a stops applying.
inline constexpr int64_t kBootstrapGraceMs = int64_t{5} * 60 * 1000;

enum class Reason : uint8_t {
  kNone,
  kFenceMissing,
  kFenceAltered,
  kFenceStale,
  kWorkloadGenerationChanged,
  kSupervisorGenerationChanged,
  kFenceBypassed,  // another NetworkPolicy widens what the workload may reach
};

// What the reconciler must do about a verdict. A suspend verdict becomes a
// PATCH only when the journal holds no suspend that already covers it.
// kRecordDryRun: enforcement is off for the namespace; record a dry-run
// intent (outcome dry-run, no PATCH) once per episode.
enum class Action : uint8_t { kNone, kPatchSuspend, kRecordDryRun };

struct Decision {
  Verdict verdict = Verdict::kHealthy;
  Reason reason = Reason::kNone;
  Action action = Action::kNone;
  // For people (log line, Event note, replay): why, e.g. "fence generation 1 -> 2".
  // Not compared by replay --check, so wording can improve between versions.
  // On the heap only when set: a healthy sandbox's decision has none, and
  // every sandbox's latest decision is kept in the journal's record.
  HeapText note;
  // When the decision expires by itself and the sandbox must be decided again
  // even if nothing changes (admitting: the end of the bootstrap grace, ms
  // since the epoch). nullopt: only a change re-evaluates it.
  PackedOptional<int64_t> reevaluate_at_ms;

  // Equality of what was decided, ignoring the note: the note may mention
  // elapsed time or improve its wording between versions; the rest may not
  // differ between two decisions over the same input.
  bool SameOutcome(const Decision& o) const {
    return verdict == o.verdict && reason == o.reason && action == o.action &&
           reevaluate_at_ms == o.reevaluate_at_ms;
  }
  bool operator==(const Decision&) const = default;
};

Decision decide(const Snapshot& snapshot);

}  // namespace fk::domain

// A decision that is absent has a verdict no decision takes: a journal
// record's latest decision is then 24 bytes, where an std::optional was 32
// more (its note an std::string, its flag and padding).
template <>
struct fk::Niche<fk::domain::Decision> {
  static constexpr uint8_t kNoVerdict = 0xff;
  static domain::Decision None() {
    domain::Decision d;
    d.verdict = static_cast<domain::Verdict>(kNoVerdict);
    return d;
  }
  static bool IsNone(const domain::Decision& d) {
    return static_cast<uint8_t>(d.verdict) == kNoVerdict;
  }
};

namespace fk::domain {

// Whether decide() reads the sandbox's pods: for one meant to run (rows 4
// and 5) or one OpenShell is bootstrapping (row 1a), never for a suspended,
// deleting or spare sandbox. Where it does not, a pod's change is not a
// decision-relevant change and the journal records nothing for it: after a
// suspend, agent-sandbox deletes the pods, and that costs no commit.
bool ReadsPods(const SandboxObservation& sb);

const char* ToString(Verdict v);
const char* ToString(Reason r);
const char* ToString(Action a);
std::optional<Verdict> ParseVerdict(const std::string& s);
std::optional<Reason> ParseReason(const std::string& s);
std::optional<Action> ParseAction(const std::string& s);

}  // namespace fk::domain
