// What /readyz reports, check by check, as Kubernetes components do
// (`/readyz?verbose`): "[+]journal ok", "[-]leader not leading", then
// "readyz check passed" or "readyz check failed".
#pragma once

#include <string>
#include <vector>

namespace fk::reconciler {

struct ReadinessCheck {
  std::string name;  // "journal", "leader", "informer sandboxes/ns-a"
  bool ok = false;
  // Why it is not ok ("not leading", "not synced: ..."); for an ok check,
  // anything worth saying ("12.1 MB free of 1.0 GB; short of space: ...").
  std::string reason;
  // Only the leader can pass it (the reconciler runs only while this replica
  // leads): `?exclude=leader` leaves it out together with the leader check.
  bool needs_leadership = false;
};

bool AllReady(const std::vector<ReadinessCheck>& checks);
// The verbose body over `all` checks: one line per check not excluded, then
// "[+]NAME excluded: ok" for each excluded name that names a check, a
// "warn: ... no matches for" line for those that name none (a run without
// --leader-elect has no leader check), and the verdict line — as
// kube-apiserver does.
std::string VerboseReadiness(const std::vector<ReadinessCheck>& all,
                             const std::vector<std::string>& excluded = {});

// `checks` without those named in `excluded` (kube-apiserver's
// `/readyz?exclude=NAME`). Excluding "leader" also leaves out the checks only
// a leader can pass, so that a standby replica is ready when it could take
// over: a pod's readiness probe asks `/readyz?exclude=leader`, and two
// replicas under a PodDisruptionBudget can be drained one at a time.
// Unknown names are ignored, as the API server ignores them.
std::vector<ReadinessCheck> Excluding(std::vector<ReadinessCheck> checks,
                                      const std::vector<std::string>& excluded);

}  // namespace fk::reconciler
