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
};

bool AllReady(const std::vector<ReadinessCheck>& checks);
// The verbose body: one line per check, then the verdict line.
std::string VerboseReadiness(const std::vector<ReadinessCheck>& checks);

}  // namespace fk::reconciler
