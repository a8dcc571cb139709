// How OpenShell's Kubernetes driver shapes a scenario sandbox: the names of
// its objects, their labels, and the Sandbox itself, ordinary or a warm-pool
// pair (claimed or spare), as scenario_apply.cc creates them. JSON only.
// Facts: shared/reference/openshell-upstream-now.md, sections A and B.
#pragma once

#include <boost/json/fwd.hpp>
#include <cstdint>
#include <string>

#include "sim/scenario.h"

namespace fk::sim {

// A pair id as OpenShell draws them: 24 lowercase hex digits.
bool IsWarmPairId(const std::string& text);
// The pair id of `warmPair: true`: derived from the sandbox's name, so the
// same scenario makes the same names on every run.
std::string DerivedWarmPairId(const std::string& name);

// The names of a scenario sandbox's objects.
struct SandboxNames {
  std::string sandbox;     // the Sandbox and its workload pod: the name, or warm-<pair id>
  std::string sandbox_id;  // openshell.ai/sandbox-id: empty for a spare
  // What names the companions (DESIGN's resource id): the pair id of a pair
  // (claimed or not), else the sandbox id; in lower case, as in the names.
  std::string resource_id;
  std::string supervisor;  // os-supervisor-<resource id>
};
SandboxNames NamesOf(const ScenarioSandbox& sb);

// spec.podTemplate.metadata.labels, which the workload pod carries exactly:
// the entry's podLabels with the two boundary labels OpenShell forces over
// them (boundary-role workload, boundary-pair the resource id).
boost::json::object WorkloadLabels(const ScenarioSandbox& sb);
// A supervisor pod's: boundary-role supervisor, boundary-pair, managed-by.
boost::json::object SupervisorLabels(const std::string& resource_id);

// The resource id of a stored Sandbox as OpenShell reads it (reference A.1):
// its warm-pair id, else its sandbox id, each from the annotation, else the
// label; in lower case; "" when it has neither. The simulator's own reading,
// as OpenShell's, not fencekeeper's (kube/objects.cc), so a test can tell
// them apart.
std::string ResourceIdOf(const boost::json::value& sandbox);

// A pod with these labels, padded with realistic fields to about `bytes` of
// JSON (0: minimal).
boost::json::value LabelledPod(const std::string& ns, const std::string& name,
                               boost::json::object labels, size_t bytes);

// The Sandbox in namespace `ns` with `annotations` (the runtime ones: the
// fence and the pods' uids) and what OpenShell adds for what `sb` is; a
// spare's bootstrap started at `now_ms`.
boost::json::value SandboxObject(const std::string& ns, const ScenarioSandbox& sb,
                                 boost::json::object annotations, int64_t now_ms);

// NetworkPolicy `ns`/`name` with `spec`, as a client POSTs it.
boost::json::value NetworkPolicyObject(const std::string& ns, const std::string& name,
                                       const boost::json::value& spec);

}  // namespace fk::sim
