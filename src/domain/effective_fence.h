// The effective fence (docs/design.md#the-effective-fence): NetworkPolicies
// add up, so the workload fence (no egress, ingress only from supervisors)
// holds only while no other policy of the namespace grants a workload pod
// more. These are the pure rules: which policy selects a workload, what a
// policy widens, and the list the observation records, so decide() and
// replay need no policy objects. Reading a policy's JSON into
// NetworkPolicyRules is kube's (objects.cc).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "domain/label_selector.h"

namespace fk::domain {

// What one policy opens beyond the fence. Stored in the journal by name
// (`fence_bypasses.widens`): change only with a migration.
enum class Widens : uint8_t { kNone = 0, kEgress = 1, kIngress = 2, kBoth = 3 };
const char* ToString(Widens w);  // "none", "egress", "ingress", "both"
std::optional<Widens> ParseWidens(const std::string& s);

// One policy that widens a sandbox's fence, as the observation records it.
struct WideningPolicy {
  std::string name;
  std::string uid;
  int64_t generation = 0;
  Widens widens = Widens::kNone;

  bool operator==(const WideningPolicy&) const = default;
};

// The directions a policy isolates, as the API server defaults them.
struct PolicyTypes {
  bool ingress = false;
  bool egress = false;
  bool operator==(const PolicyTypes&) const = default;
};

// `listed`: the policy's spec.policyTypes, nullopt when absent or empty. The
// API server fills an absent list in on create and update: Ingress, plus
// Egress when the policy has egress rules.
PolicyTypes DefaultedPolicyTypes(const std::optional<PolicyTypes>& listed, bool has_egress_rules);

// What the effective fence reads of a NetworkPolicy.
struct NetworkPolicyRules {
  // spec.podSelector: matchLabels and matchExpressions as requirements; none
  // selects every pod of the namespace.
  LabelSelector pod_selector;
  // False when the selector could not be read (an operator the API server
  // would have refused, a value of the wrong type): such a policy is taken
  // to select every pod, so an unreadable policy can only fail closed.
  bool selector_readable = true;
  PolicyTypes types;
  bool has_egress_rule = false;
  // An ingress rule other than the fence's own (from supervisor pods of the
  // namespace on TCP to the boundary port); compared when the policy is read,
  // where the rule's JSON and the boundary port are at hand.
  bool has_foreign_ingress_rule = false;
};

// A label's value on the workload, nullopt when it has none.
using LabelLookup = std::function<std::optional<std::string>(const std::string&)>;

bool SelectsWorkload(const NetworkPolicyRules& policy, const LabelLookup& workload_labels);
// Egress: it isolates egress and has an egress rule (wherever the rule leads:
// the fence allows none). Ingress: it isolates ingress and has a rule other
// than the fence's own.
Widens WidensOf(const NetworkPolicyRules& policy);

// A namespace's policy, by name, as the effective fence reads it.
struct NamedPolicy {
  std::string name;
  std::string uid;
  int64_t generation = 0;
  NetworkPolicyRules rules;
};

// The policies other than the workload fence that select the workload and
// widen what it may reach, sorted by name.
std::vector<WideningPolicy> WideningPolicies(const std::vector<NamedPolicy>& policies,
                                             const LabelLookup& workload_labels);

// "NetworkPolicy allow-dns widens egress; NetworkPolicy x widens egress and ingress":
// the log line's, the Event's and the decision note's wording.
std::string DescribeBypass(const std::vector<WideningPolicy>& bypass);

// Of the API groups a cluster serves, those whose policies can also open or
// close a boundary and that fencekeeper does not evaluate: SIG Network's
// cluster-scoped policies (policy.networking.k8s.io: AdminNetworkPolicy,
// BaselineAdminNetworkPolicy, ClusterNetworkPolicy) and the CNIs' own
// (cilium.io, crd.projectcalico.org, projectcalico.org).
std::vector<std::string> UnevaluatedPolicyApis(const std::vector<std::string>& served_groups);

}  // namespace fk::domain
