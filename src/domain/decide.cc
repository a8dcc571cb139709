#include "domain/decision.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "domain/event.h"

namespace fk::domain {
namespace {

std::string Optional(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : std::string("none");
}
std::string Optional(const std::optional<std::string>& v) { return v ? *v : std::string("none"); }

bool FenceMatches(const Snapshot& s) {
  const auto& fence = s.workload_fence;
  return s.sandbox.fence_uid.has_value() && *s.sandbox.fence_uid == fence.uid &&
         s.sandbox.fence_generation.has_value() && *s.sandbox.fence_generation == fence.generation;
}

// Which fence problem there is, if any (rows 2 and 5 share this). Only the
// workload fence and what widens it count: the supervisor policy only allows
// supervisor egress, and OpenShell re-creates it without suspending anyone.
Reason FenceProblem(const Snapshot& s, std::string* note) {
  const auto& fence = s.workload_fence;
  if (!fence.present) {
    *note = std::string("fence policy missing: ") + kWorkloadPolicyName;
    return Reason::kFenceMissing;
  }
  if (!fence.intact) {
    *note = std::string("fence policy altered: ") + kWorkloadPolicyName;
    return Reason::kFenceAltered;
  }
  if (!s.bypass.empty()) {
    *note = "fence bypassed: " + DescribeBypass(s.bypass);
    return Reason::kFenceBypassed;
  }
  if (!FenceMatches(s)) {
    const auto& sb = s.sandbox;
    if (sb.fence_uid && *sb.fence_uid != fence.uid) {
      *note = "fence recreated: uid " + *sb.fence_uid + " -> " + fence.uid + ", generation " +
              Optional(sb.fence_generation) + " -> " + std::to_string(fence.generation);
    } else {
      *note = "fence generation " + Optional(sb.fence_generation) + " -> " +
              std::to_string(fence.generation);
      if (!sb.fence_uid) *note += " (no admitted fence uid recorded)";
    }
    return Reason::kFenceStale;
  }
  return Reason::kNone;
}

// The intent rule: a suspend verdict becomes a PATCH only if the journal holds
// no suspend for this sandbox that is pending, or applied at a generation at
// least as new as the one observed (so a stale read never causes a second
// PATCH, and a resumed sandbox at a newer generation is a new episode).
Decision Suspend(const Snapshot& s, Reason reason, const std::string& note) {
  Decision d{Verdict::kSuspend, reason, Action::kPatchSuspend, note, std::nullopt};
  const auto& h = s.history;
  if (h.pending_intent_seq) {
    d.action = Action::kNone;
    d.note +=
        "; suspend already pending (journal seq " + std::to_string(*h.pending_intent_seq) + ")";
  } else if (h.applied_generation && *h.applied_generation >= s.sandbox.generation) {
    d.action = Action::kNone;
    d.note += "; suspend already applied at generation " + std::to_string(*h.applied_generation) +
              " (observed generation " + std::to_string(s.sandbox.generation) + ")";
  } else if (s.dry_run) {
    // The same rule over dry-run intents, which never cover a real one.
    const bool recorded = h.dry_run_generation && *h.dry_run_generation >= s.sandbox.generation;
    d.action = recorded ? Action::kNone : Action::kRecordDryRun;
    d.note += recorded ? "; would suspend (dry run), recorded at generation " +
                             std::to_string(*h.dry_run_generation)
                       : std::string("; would suspend (dry run)");
  }
  return d;
}

// |a - b| < limit, without the overflow a plain subtraction has for
// annotation values near the ends of int64 (limit > 0).
bool WithinDistance(int64_t a, int64_t b, int64_t limit) {
  const uint64_t distance = a >= b ? static_cast<uint64_t>(a) - static_cast<uint64_t>(b)
                                   : static_cast<uint64_t>(b) - static_cast<uint64_t>(a);
  return distance < static_cast<uint64_t>(limit);
}

// Row 1a. OpenShell writes the fence annotations late in its own create and
// resume flows (docs/design.md#openshells-create-and-resume-flows): until then they are
// absent or name the old fence, and rows 2-4 would suspend a sandbox that is
// being admitted correctly. The window is safe to wait out only while the
// workload cannot run: its pod does not exist yet or still has scheduling
// gates, which OpenShell removes only after writing the annotations. The
// grace is bounded on both sides of the start, so a start time far in the
// future (a skewed clock, a bogus annotation) cannot hold a sandbox forever.
std::optional<Decision> Admitting(const Snapshot& s) {
  const auto& sb = s.sandbox;
  const bool create_or_restart =
      sb.bootstrap_op == BootstrapOp::kCreate || sb.bootstrap_op == BootstrapOp::kRestart;
  if (!sb.bootstrapping || !create_or_restart || sb.bootstrap_phase != "preparing")
    return std::nullopt;
  if (s.workload_pod.present && !s.workload_pod.scheduling_gated) return std::nullopt;
  if (!sb.bootstrap_started_at_ms) return std::nullopt;
  const int64_t started = *sb.bootstrap_started_at_ms;
  if (!WithinDistance(s.observed_at_ms, started, kBootstrapGraceMs)) return std::nullopt;

  const int64_t grace_ends =
      std::min(started, std::numeric_limits<int64_t>::max() - kBootstrapGraceMs) +
      kBootstrapGraceMs;
  const int64_t age_s = (s.observed_at_ms - started) / 1000;  // within +-grace: no overflow
  Decision d{Verdict::kAdmitting, Reason::kNone, Action::kNone, "", grace_ends};
  d.note = std::string("OpenShell is admitting the sandbox (") + ToString(sb.bootstrap_op) +
           ", phase preparing, " +
           (age_s >= 0 ? "started " + std::to_string(age_s) + " s ago"
                       : "starts " + std::to_string(-age_s) + " s after the observation") +
           ", workload pod " + (s.workload_pod.present ? "gated" : "absent") +
           "); re-evaluate at " + std::to_string(grace_ends);
  return d;
}

}  // namespace

Decision decide(const Snapshot& s) {
  const auto& sb = s.sandbox;
  if (sb.deleting) {
    return {Verdict::kIgnore, Reason::kNone, Action::kNone, "sandbox is being deleted",
            std::nullopt};
  }
  if (sb.spare) {
    return {Verdict::kIgnore, Reason::kNone, Action::kNone,
            "spare: an unassigned warm-pool pair, OpenShell's to prepare and retire", std::nullopt};
  }
  if (auto admitting = Admitting(s)) return std::move(*admitting);

  const bool may_run =
      sb.should_run || (sb.bootstrapping && (sb.bootstrap_op == BootstrapOp::kCreate ||
                                             sb.bootstrap_op == BootstrapOp::kRestart));
  std::string fence_note;
  const Reason fence_problem = FenceProblem(s, &fence_note);

  if (may_run && fence_problem != Reason::kNone) return Suspend(s, fence_problem, fence_note);

  if (sb.should_run && !sb.bootstrapping) {
    if (!s.workload_pod.present || !sb.workload_uid || *sb.workload_uid != s.workload_pod.uid) {
      return Suspend(
          s, Reason::kWorkloadGenerationChanged,
          "workload pod " +
              (s.workload_pod.present ? "uid " + s.workload_pod.uid : std::string("missing")) +
              ", admitted with " + Optional(sb.workload_uid));
    }
    if (!s.supervisor_pod.present || !sb.supervisor_uid ||
        *sb.supervisor_uid != s.supervisor_pod.uid) {
      return Suspend(
          s, Reason::kSupervisorGenerationChanged,
          "supervisor pod " +
              (s.supervisor_pod.present ? "uid " + s.supervisor_pod.uid : std::string("missing")) +
              ", admitted with " + Optional(sb.supervisor_uid));
    }
  }

  if (!may_run && fence_problem != Reason::kNone) {
    return {Verdict::kHold, fence_problem, Action::kNone, "already fail-closed; " + fence_note,
            std::nullopt};
  }
  return {Verdict::kHealthy, Reason::kNone, Action::kNone, "", std::nullopt};
}

bool ReadsPods(const SandboxObservation& sb) {
  return !sb.deleting && !sb.spare && (sb.should_run || sb.bootstrapping);
}

}  // namespace fk::domain
