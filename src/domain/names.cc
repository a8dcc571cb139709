// String forms of the domain enums. These strings are stored in the journal
// and read by audit queries, so they are part of the on-disk format: change
// one only with a migration.
#include <array>
#include <utility>

#include "domain/decision.h"
#include "domain/event.h"
#include "domain/observation.h"

namespace fk::domain {
namespace {

template <class E, size_t N>
const char* NameOf(const std::array<std::pair<E, const char*>, N>& table, E v) {
  for (const auto& [e, s] : table)
    if (e == v) return s;
  return "unknown";
}
template <class E, size_t N>
std::optional<E> ValueOf(const std::array<std::pair<E, const char*>, N>& table,
                         const std::string& s) {
  for (const auto& [e, name] : table)
    if (s == name) return e;
  return std::nullopt;
}

constexpr std::array<std::pair<ApiVersion, const char*>, 2> kApiVersions{{
    {ApiVersion::kV1beta1, "v1beta1"},
    {ApiVersion::kV1alpha1, "v1alpha1"},
}};
constexpr std::array<std::pair<BootstrapOp, const char*>, 5> kBootstrapOps{{
    {BootstrapOp::kNone, ""},
    {BootstrapOp::kCreate, "create"},
    {BootstrapOp::kRestart, "restart"},
    {BootstrapOp::kStop, "stop"},
    {BootstrapOp::kOther, "other"},
}};
constexpr std::array<std::pair<Verdict, const char*>, 5> kVerdicts{{
    {Verdict::kIgnore, "ignore"},
    {Verdict::kSuspend, "suspend"},
    {Verdict::kHold, "hold"},
    {Verdict::kHealthy, "healthy"},
    {Verdict::kAdmitting, "admitting"},
}};
constexpr std::array<std::pair<Reason, const char*>, 7> kReasons{{
    {Reason::kNone, ""},
    {Reason::kFenceMissing, "fence-missing"},
    {Reason::kFenceAltered, "fence-altered"},
    {Reason::kFenceStale, "fence-stale"},
    {Reason::kWorkloadGenerationChanged, "workload-generation-changed"},
    {Reason::kSupervisorGenerationChanged, "supervisor-generation-changed"},
    {Reason::kFenceBypassed, "fence-bypassed"},
}};
constexpr std::array<std::pair<Action, const char*>, 3> kActions{{
    {Action::kNone, "none"},
    {Action::kPatchSuspend, "patch-suspend"},
    {Action::kRecordDryRun, "record-dry-run"},
}};
constexpr std::array<std::pair<Outcome, const char*>, 6> kOutcomes{{
    {Outcome::kPending, "pending"},
    {Outcome::kApplied, "applied"},
    {Outcome::kConflict, "conflict"},
    {Outcome::kFailed, "failed"},
    {Outcome::kSuperseded, "superseded"},
    {Outcome::kDryRun, "dry-run"},
}};
constexpr std::array<std::pair<EventKind, const char*>, 9> kEventKinds{{
    {EventKind::kFenceObserved, "fence_observed"},
    {EventKind::kSandboxObserved, "sandbox_observed"},
    {EventKind::kDecided, "decided"},
    {EventKind::kSuspendIntent, "suspend_intent"},
    {EventKind::kSuspendOutcome, "suspend_outcome"},
    {EventKind::kLeadership, "leadership"},
    {EventKind::kForgotten, "forgotten"},
    {EventKind::kPruned, "pruned"},
    {EventKind::kWriterStarted, "writer_started"},
}};

}  // namespace

const char* ToString(ApiVersion v) { return NameOf(kApiVersions, v); }
const char* ToString(BootstrapOp v) { return NameOf(kBootstrapOps, v); }
const char* ToString(Verdict v) { return NameOf(kVerdicts, v); }
const char* ToString(Reason v) { return NameOf(kReasons, v); }
const char* ToString(Action v) { return NameOf(kActions, v); }
const char* ToString(Outcome v) { return NameOf(kOutcomes, v); }
const char* ToString(EventKind v) { return NameOf(kEventKinds, v); }
std::optional<ApiVersion> ParseApiVersion(const std::string& s) { return ValueOf(kApiVersions, s); }
std::optional<BootstrapOp> ParseBootstrapOp(const std::string& s) {
  return ValueOf(kBootstrapOps, s);
}
std::optional<Verdict> ParseVerdict(const std::string& s) { return ValueOf(kVerdicts, s); }
std::optional<Reason> ParseReason(const std::string& s) { return ValueOf(kReasons, s); }
std::optional<Action> ParseAction(const std::string& s) { return ValueOf(kActions, s); }
std::optional<Outcome> ParseOutcome(const std::string& s) { return ValueOf(kOutcomes, s); }
std::optional<EventKind> ParseEventKind(const std::string& s) { return ValueOf(kEventKinds, s); }

}  // namespace fk::domain
