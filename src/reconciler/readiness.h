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
  std::string reason;  // why it is not ok ("not leading", "not synced: ..."); "" when ok
};

bool AllReady(const std::vector<ReadinessCheck>& checks);
// The verbose body: one line per check, then the verdict line.
std::string VerboseReadiness(const std::vector<ReadinessCheck>& checks);

}  // namespace fk::reconciler
