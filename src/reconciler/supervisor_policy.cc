#include "reconciler/supervisor_policy.h"

#include "common/log.h"
#include "domain/event.h"

namespace fk::reconciler {
namespace {

const char* kWhy = "OpenShell re-creates it; nobody is suspended for it";

}  // namespace

void SupervisorPolicyWatch::Update(const ClusterCache& cache) {
  SortedNames<Seen> now;
  for (const auto& [ns, n] : cache.CountByNamespace(CacheKind::kPolicies)) {
    if (!cache.Policy(ns, domain::kWorkloadPolicyName)) continue;  // not fenced: coverage's
    const PolicyPtr p = cache.Policy(ns, domain::kSupervisorPolicyName);
    Seen s;
    s.state = !p ? "missing" : p->intact ? "intact" : "altered";
    if (p) {
      s.uid = p->uid;
      s.generation = p->generation;
    }
    now[ns] = std::move(s);
  }
  std::lock_guard lock(mu_);
  for (const auto& [ns, s] : now) {
    const auto before = seen_.find(ns);
    const bool known = before != seen_.end();
    if (s.state == "intact") {
      if (known && before->second.state != "intact")
        log::Info("supervisor policy intact again")
            .Namespace(ns.str())
            .Str("policy", domain::kSupervisorPolicyName);
      continue;
    }
    if (known && before->second == s) continue;
    log::Warn(s.state == "missing" ? "supervisor policy missing" : "supervisor policy altered")
        .Namespace(ns.str())
        .Str("policy", domain::kSupervisorPolicyName)
        .Str("uid", s.uid.str())
        .Int("generation", s.generation)
        .Str("why", kWhy);
  }
  seen_ = std::move(now);
}

std::vector<ReadinessCheck> SupervisorPolicyWatch::Checks() const {
  std::lock_guard lock(mu_);
  std::vector<ReadinessCheck> checks;
  for (const auto& [ns, s] : seen_) {
    if (s.state != "intact")
      checks.push_back({"supervisor-policy " + ns.str(), true, std::string(s.state) + ": " + kWhy});
  }
  return checks;
}

std::map<std::string, int> SupervisorPolicyWatch::Counts() const {
  std::map<std::string, int> counts{{"intact", 0}, {"missing", 0}, {"altered", 0}};
  std::lock_guard lock(mu_);
  for (const auto& [ns, s] : seen_) ++counts[std::string(s.state)];
  return counts;
}

}  // namespace fk::reconciler
