// NetworkPolicy specs read for the fence: whether one of the two fence
// policies is intact (its spec is the intended one), and what any policy
// means for the effective fence (docs/design.md#the-effective-fence), in the
// domain's NetworkPolicyRules. JSON stays in the .cc file.
#pragma once

#include "domain/effective_fence.h"

namespace boost::json {
class value;
class object;
}  // namespace boost::json

namespace fk::kube {

enum class PolicyRole { kWorkload, kSupervisor };

// Whether `spec` equals the intended spec of the fence policy `role`,
// compared normalized (an empty list equals an absent one, a port without a
// protocol is TCP, policyTypes is a set).
bool SpecIntact(const boost::json::value& spec, PolicyRole role, int boundary_port);

// The rules of any NetworkPolicy's spec (null: no spec, which selects every
// pod and allows nothing). An ingress rule equal to the workload fence's own
// (from supervisor pods on TCP `boundary_port`) does not widen ingress; a
// field of the wrong type reads as what fails closed (a selector that selects
// every pod, a rule that widens).
domain::NetworkPolicyRules ReadPolicyRules(const boost::json::value* spec, int boundary_port);

// metav1.LabelSelector -> requirements; nullopt when it is not one the API
// server would have accepted.
std::optional<domain::LabelSelector> ReadLabelSelector(const boost::json::object& selector);

}  // namespace fk::kube
