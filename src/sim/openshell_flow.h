// OpenShell's create and resume flows (docs/design.md#openshells-create-and-resume-flows)
// acted out one step at a time through the simulator's own request handling,
// as OpenShell's API calls would reach a real API server. The deterministic
// simulation (tests/sim_cluster.h) interleaves these steps with its other
// actors; `fencekeeper sim` plays them on request (sim/flow_requests.h).
#pragma once

#include <boost/json/fwd.hpp>
#include <cstdint>
#include <string>

namespace fk::sim {

class Simulator;

// The annotations OpenShell sets while it bootstraps a sandbox: bootstrapping
// "true", `operation` (create or restart), phase preparing, started now.
boost::json::object BootstrapAnnotations(const char* operation, int64_t now_ms);

// The scheduling gate OpenShell's sandbox template carries: every workload
// pod starts gated until OpenShell has recorded its admission.
boost::json::array AdmissionGates();

// One flow in progress. `step` is the next step; the create flow's sandbox
// already exists, suspended and bootstrapping (OpenShell POSTs it so).
struct OpenShellFlow {
  enum class Type { kCreate, kResume } type;
  std::string ns;
  std::string name;
  int step = 0;
  std::string fence_uid;  // the workload fence as OpenShell read it
  int64_t fence_generation = 0;

  static constexpr int kSteps = 6;
  bool Done() const { return step >= kSteps; }
};

// Takes `flow`'s next step (one API call; un-gating: two) and advances it.
// Returns what the step did, for a trace ("new gated supervisor pod", ...),
// or "" when the flow waits — the workload pod does not exist yet — and sent
// nothing that changes the cluster.
//   0  the gated supervisor pod (resume: the old one replaced)
//   1  Running (resume: as a bootstrap, operation restart, phase preparing)
//   2  the current fence's uid and generation and both pods' uids recorded
//   3  both pods un-gated
//   4  phase released
//   5  bootstrap complete: its annotations cleared
std::string AdvanceOpenShellFlow(Simulator& sim, OpenShellFlow& flow);

}  // namespace fk::sim
