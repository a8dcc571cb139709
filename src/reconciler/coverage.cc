#include "reconciler/coverage.h"

#include <set>

#include "common/log.h"
#include "domain/event.h"

namespace fk::reconciler {

const char* ToString(Coverage c) {
  switch (c) {
    case Coverage::kCovered:
      return "covered";
    case Coverage::kEmpty:
      return "empty";
    case Coverage::kMissing:
      return "missing";
    case Coverage::kUnfenced:
      return "unfenced";
    case Coverage::kNoSandboxes:
      return "no-sandboxes";
  }
  return "?";
}

const std::vector<Coverage>& AllCoverages() {
  static const std::vector<Coverage> all = {Coverage::kCovered, Coverage::kEmpty,
                                            Coverage::kMissing, Coverage::kUnfenced,
                                            Coverage::kNoSandboxes};
  return all;
}

Coverage Classify(size_t sandboxes, bool fenced, std::optional<bool> exists) {
  if (sandboxes > 0) return fenced ? Coverage::kCovered : Coverage::kUnfenced;
  if (fenced) return Coverage::kNoSandboxes;
  return exists == false ? Coverage::kMissing : Coverage::kEmpty;
}

namespace {

// What an operator reads about a namespace that is not covered.
std::string Why(Coverage c) {
  switch (c) {
    case Coverage::kMissing:
      return "the namespace does not exist (check --namespace)";
    case Coverage::kUnfenced:
      return "sandboxes but no fence policies (openshell-sandbox-workloads, "
             "openshell-sandbox-supervisors): nothing to fail closed against";
    case Coverage::kNoSandboxes:
      return "fence policies but no sandbox the selector selects (check --selector)";
    default:
      return "";
  }
}

bool Problem(Coverage c) {
  return c == Coverage::kMissing || c == Coverage::kUnfenced || c == Coverage::kNoSandboxes;
}

}  // namespace

CoverageWatch::CoverageWatch(std::vector<std::string> watched, Exists exists)
    : watched_(std::move(watched)), exists_(std::move(exists)) {}

void CoverageWatch::Update(const ClusterCache& cache) {
  const auto sandboxes = cache.CountByNamespace(CacheKind::kSandboxes);
  std::set<std::string> names(watched_.begin(), watched_.end());
  if (watched_.empty()) {
    for (const auto& [ns, n] : sandboxes) names.insert(ns);
    for (const auto& [ns, n] : cache.CountByNamespace(CacheKind::kPolicies)) names.insert(ns);
  }
  SortedNames<Coverage> states;
  for (const std::string& ns : names) {
    const auto it = sandboxes.find(ns);
    const size_t n = it == sandboxes.end() ? 0 : it->second;
    const bool fenced = cache.Policy(ns, domain::kWorkloadPolicyName) ||
                        cache.Policy(ns, domain::kSupervisorPolicyName);
    std::optional<bool> exists = true;  // a namespace holding objects exists
    if (n == 0 && !fenced && !watched_.empty()) {
      std::lock_guard lock(mu_);
      auto [known, fresh] = existence_.try_emplace(ns);
      if (fresh && exists_) known->second = exists_(ns);
      exists = known->second;
    }
    states[ns] = Classify(n, fenced, exists);
  }
  std::lock_guard lock(mu_);
  for (const auto& [ns, state] : states) {
    const auto before = states_.find(ns);
    if (!Problem(state) || (before != states_.end() && before->second == state)) continue;
    log::Warn("watched namespace not covered")
        .Namespace(ns.str())
        .Str("state", ToString(state))
        .Str("why", Why(state));
  }
  states_ = std::move(states);
  updated_ = true;
}

std::vector<ReadinessCheck> CoverageWatch::Checks() const {
  std::lock_guard lock(mu_);
  if (!updated_) return {};
  std::vector<ReadinessCheck> checks;
  int covered = 0;
  for (const auto& [ns, state] : states_) {
    covered += state == Coverage::kCovered;
    if (Problem(state)) checks.push_back({"coverage " + ns.str(), true, Why(state)});
  }
  // All well: nothing to add (a covered namespace is the normal case).
  if (checks.empty()) return checks;
  checks.push_back({"coverage", true,
                    std::to_string(covered) + " of " + std::to_string(states_.size()) +
                        " watched namespace(s) covered"});
  return checks;
}

std::map<std::string, int> CoverageWatch::Counts() const {
  std::map<std::string, int> counts;
  for (Coverage c : AllCoverages()) counts[ToString(c)] = 0;
  std::lock_guard lock(mu_);
  for (const auto& [ns, state] : states_) ++counts[ToString(state)];
  return counts;
}

}  // namespace fk::reconciler
