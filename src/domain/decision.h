// The verdict for one sandbox, and decide(): DESIGN §2's decision table plus
// the journal-derived intent rule. decide() is pure (no I/O, no clock), which
// is what makes `replay --check` possible.
#pragma once

#include <optional>
#include <string>

#include "domain/observation.h"

namespace fk::domain {

enum class Verdict {
  kIgnore,   // row 1: being deleted
  kSuspend,  // rows 2-4: must fail closed
  kHold,     // row 5: already fail-closed behind a bad fence; converged
  kHealthy,  // row 6
};

enum class Reason {
  kNone,
  kFenceMissing,
  kFenceAltered,
  kFenceStale,
  kWorkloadGenerationChanged,
  kSupervisorGenerationChanged,
};

// What the reconciler must do about a verdict. A suspend verdict becomes a
// PATCH only when the journal holds no suspend that already covers it.
enum class Action { kNone, kPatchSuspend };

struct Decision {
  Verdict verdict = Verdict::kHealthy;
  Reason reason = Reason::kNone;
  Action action = Action::kNone;
  // For people (log line, Event note, replay): why, e.g. "fence generation 1 -> 2".
  // Not compared by replay --check, so wording can improve between versions.
  std::string note;

  // Equality of what was decided (verdict, reason, action), ignoring the note.
  bool SameOutcome(const Decision& o) const {
    return verdict == o.verdict && reason == o.reason && action == o.action;
  }
  bool operator==(const Decision&) const = default;
};

Decision decide(const Snapshot& snapshot);

const char* ToString(Verdict v);
const char* ToString(Reason r);
const char* ToString(Action a);
std::optional<Verdict> ParseVerdict(const std::string& s);
std::optional<Reason> ParseReason(const std::string& s);
std::optional<Action> ParseAction(const std::string& s);

}  // namespace fk::domain
