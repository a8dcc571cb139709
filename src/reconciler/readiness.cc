#include "reconciler/readiness.h"

#include <algorithm>

namespace fk::reconciler {

bool AllReady(const std::vector<ReadinessCheck>& checks) {
  return !checks.empty() &&
         std::all_of(checks.begin(), checks.end(), [](const ReadinessCheck& c) { return c.ok; });
}

std::string VerboseReadiness(const std::vector<ReadinessCheck>& all,
                             const std::vector<std::string>& excluded) {
  const std::vector<ReadinessCheck> checks = Excluding(all, excluded);
  std::string body;
  for (const ReadinessCheck& c : checks)
    body += (c.ok ? "[+]" + c.name + " ok" + (c.reason.empty() ? "" : ": " + c.reason)
                  : "[-]" + c.name + " " + c.reason) +
            "\n";
  std::string unmatched;
  std::vector<std::string> names = excluded;  // each once, in order, as kube-apiserver's set
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const std::string& name : names) {
    const bool names_a_check = std::any_of(all.begin(), all.end(),
                                           [&](const ReadinessCheck& c) { return c.name == name; });
    if (names_a_check) {
      body += "[+]" + name + " excluded: ok\n";
    } else {
      unmatched += (unmatched.empty() ? "" : ", ") + ("\"" + name + "\"");
    }
  }
  if (!unmatched.empty())
    body += "warn: some health checks cannot be excluded: no matches for " + unmatched + "\n";
  body += AllReady(checks) ? "readyz check passed\n" : "readyz check failed\n";
  return body;
}

std::vector<ReadinessCheck> Excluding(std::vector<ReadinessCheck> checks,
                                      const std::vector<std::string>& excluded) {
  const auto named = [&](const std::string& name) {
    return std::find(excluded.begin(), excluded.end(), name) != excluded.end();
  };
  const bool without_leader = named("leader");
  std::erase_if(checks, [&](const ReadinessCheck& c) {
    return named(c.name) || (without_leader && c.needs_leadership);
  });
  return checks;
}

}  // namespace fk::reconciler
