#include "domain/decision.h"

#include <string>

namespace fk::domain {
namespace {

std::string Optional(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : std::string("none");
}
std::string Optional(const std::optional<std::string>& v) {
  return v ? *v : std::string("none");
}

bool FenceMatches(const Snapshot& s) {
  const auto& fence = s.workload_fence;
  return s.sandbox.fence_uid.has_value() && *s.sandbox.fence_uid == fence.uid &&
         s.sandbox.fence_generation.has_value() && *s.sandbox.fence_generation == fence.generation;
}

// Which fence problem there is, if any (rows 2 and 5 share this).
Reason FenceProblem(const Snapshot& s, std::string* note) {
  if (!s.workload_fence.present || !s.supervisor_fence.present) {
    *note = std::string("fence policy missing:") +
            (s.workload_fence.present ? "" : " openshell-sandbox-workloads") +
            (s.supervisor_fence.present ? "" : " openshell-sandbox-supervisors");
    return Reason::kFenceMissing;
  }
  if (!s.workload_fence.intact || !s.supervisor_fence.intact) {
    *note = std::string("fence policy altered:") +
            (s.workload_fence.intact ? "" : " openshell-sandbox-workloads") +
            (s.supervisor_fence.intact ? "" : " openshell-sandbox-supervisors");
    return Reason::kFenceAltered;
  }
  if (!FenceMatches(s)) {
    const auto& sb = s.sandbox;
    if (sb.fence_uid && *sb.fence_uid != s.workload_fence.uid) {
      *note = "fence recreated: uid " + *sb.fence_uid + " -> " + s.workload_fence.uid +
              ", generation " + Optional(sb.fence_generation) + " -> " +
              std::to_string(s.workload_fence.generation);
    } else {
      *note = "fence generation " + Optional(sb.fence_generation) + " -> " +
              std::to_string(s.workload_fence.generation);
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
Decision Suspend(const Snapshot& s, Reason reason, std::string note) {
  Decision d{Verdict::kSuspend, reason, Action::kPatchSuspend, std::move(note)};
  const auto& h = s.history;
  if (h.pending_intent_seq) {
    d.action = Action::kNone;
    d.note += "; suspend already pending (journal seq " + std::to_string(*h.pending_intent_seq) + ")";
  } else if (h.applied_generation && *h.applied_generation >= s.sandbox.generation) {
    d.action = Action::kNone;
    d.note += "; suspend already applied at generation " + std::to_string(*h.applied_generation) +
              " (observed generation " + std::to_string(s.sandbox.generation) + ")";
  }
  return d;
}

}  // namespace

Decision decide(const Snapshot& s) {
  const auto& sb = s.sandbox;
  if (sb.deleting) return {Verdict::kIgnore, Reason::kNone, Action::kNone, "sandbox is being deleted"};

  const bool may_run =
      sb.should_run || (sb.bootstrapping && (sb.bootstrap_op == BootstrapOp::kCreate ||
                                             sb.bootstrap_op == BootstrapOp::kRestart));
  std::string fence_note;
  const Reason fence_problem = FenceProblem(s, &fence_note);

  if (may_run && fence_problem != Reason::kNone) return Suspend(s, fence_problem, fence_note);

  if (sb.should_run && !sb.bootstrapping) {
    if (!s.workload_pod.present || !sb.workload_uid || *sb.workload_uid != s.workload_pod.uid) {
      return Suspend(s, Reason::kWorkloadGenerationChanged,
                     "workload pod " + (s.workload_pod.present ? "uid " + s.workload_pod.uid
                                                               : std::string("missing")) +
                         ", admitted with " + Optional(sb.workload_uid));
    }
    if (!s.supervisor_pod.present || !sb.supervisor_uid ||
        *sb.supervisor_uid != s.supervisor_pod.uid) {
      return Suspend(s, Reason::kSupervisorGenerationChanged,
                     "supervisor pod " + (s.supervisor_pod.present ? "uid " + s.supervisor_pod.uid
                                                                   : std::string("missing")) +
                         ", admitted with " + Optional(sb.supervisor_uid));
    }
  }

  if (!may_run && fence_problem != Reason::kNone) {
    return {Verdict::kHold, fence_problem, Action::kNone, "already fail-closed; " + fence_note};
  }
  return {Verdict::kHealthy, Reason::kNone, Action::kNone, ""};
}

}  // namespace fk::domain
