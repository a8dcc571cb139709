#include "domain/effective_fence.h"

#include <algorithm>
#include <array>
#include <utility>

#include "domain/event.h"

namespace fk::domain {
namespace {

constexpr std::array<std::pair<Widens, const char*>, 4> kWidens{{
    {Widens::kNone, "none"},
    {Widens::kEgress, "egress"},
    {Widens::kIngress, "ingress"},
    {Widens::kBoth, "both"},
}};

// For people: "both" reads as the two directions.
const char* Directions(Widens w) { return w == Widens::kBoth ? "egress and ingress" : ToString(w); }

}  // namespace

const char* ToString(Widens w) {
  for (const auto& [value, name] : kWidens)
    if (value == w) return name;
  return "none";
}

std::optional<Widens> ParseWidens(const std::string& s) {
  for (const auto& [value, name] : kWidens)
    if (s == name) return value;
  return std::nullopt;
}

PolicyTypes DefaultedPolicyTypes(const std::optional<PolicyTypes>& listed, bool has_egress_rules) {
  if (listed) return *listed;
  return {true, has_egress_rules};
}

bool SelectsWorkload(const NetworkPolicyRules& policy, const LabelLookup& workload_labels) {
  return !policy.selector_readable || policy.pod_selector.Matches(workload_labels);
}

Widens WidensOf(const NetworkPolicyRules& p) {
  const bool egress = p.types.egress && p.has_egress_rule;
  const bool ingress = p.types.ingress && p.has_foreign_ingress_rule;
  if (egress && ingress) return Widens::kBoth;
  if (egress) return Widens::kEgress;
  if (ingress) return Widens::kIngress;
  return Widens::kNone;
}

std::vector<WideningPolicy> WideningPolicies(const std::vector<NamedPolicy>& policies,
                                             const LabelLookup& workload_labels) {
  std::vector<WideningPolicy> out;
  for (const NamedPolicy& p : policies) {
    if (p.name == kWorkloadPolicyName) continue;  // the fence itself is judged as intact or not
    const Widens widens = WidensOf(p.rules);
    if (widens == Widens::kNone || !SelectsWorkload(p.rules, workload_labels)) continue;
    out.push_back({p.name, p.uid, p.generation, widens});
  }
  std::sort(out.begin(), out.end(),
            [](const WideningPolicy& a, const WideningPolicy& b) { return a.name < b.name; });
  return out;
}

std::string DescribeBypass(const std::vector<WideningPolicy>& bypass) {
  std::string out;
  for (const WideningPolicy& p : bypass) {
    if (!out.empty()) out += "; ";
    out += "NetworkPolicy " + p.name + " widens " + Directions(p.widens);
  }
  return out;
}

std::vector<std::string> UnevaluatedPolicyApis(const std::vector<std::string>& served_groups) {
  static const char* const kPolicyGroups[] = {"policy.networking.k8s.io", "cilium.io",
                                              "crd.projectcalico.org", "projectcalico.org"};
  std::vector<std::string> out;
  for (const char* group : kPolicyGroups) {
    if (std::find(served_groups.begin(), served_groups.end(), group) != served_groups.end())
      out.emplace_back(group);
  }
  return out;
}

}  // namespace fk::domain
