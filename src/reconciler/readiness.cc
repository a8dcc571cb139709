#include "reconciler/readiness.h"

#include <algorithm>

namespace fk::reconciler {

bool AllReady(const std::vector<ReadinessCheck>& checks) {
  return !checks.empty() &&
         std::all_of(checks.begin(), checks.end(), [](const ReadinessCheck& c) { return c.ok; });
}

std::string VerboseReadiness(const std::vector<ReadinessCheck>& checks) {
  std::string body;
  for (const ReadinessCheck& c : checks)
    body += (c.ok ? "[+]" + c.name + " ok" + (c.reason.empty() ? "" : ": " + c.reason)
                  : "[-]" + c.name + " " + c.reason) +
            "\n";
  body += AllReady(checks) ? "readyz check passed\n" : "readyz check failed\n";
  return body;
}

}  // namespace fk::reconciler
