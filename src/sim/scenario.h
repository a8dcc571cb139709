// Simulator scenarios: a YAML file with options, faults, namespaces of
// OpenShell sandboxes (expanded into fences, pods and annotated Sandboxes),
// and raw Kubernetes objects. The format is documented in the README
// ("Simulator scenarios"); tests/scenarios/incident-3525.yaml is an example.
//
// Included by the simulator's callers and many tests: it names Boost.JSON
// without its headers (Scenario's members are defined in scenario.cc), and
// callers that build or read the JSON include Boost.JSON themselves.
#pragma once

#include <boost/json/fwd.hpp>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "kube/objects.h"
#include "sim/simulator.h"

namespace fk::sim {

struct ScenarioSandbox {
  // An ordinary sandbox's name; a warm-pool pair's logical name (its Sandbox
  // is named warm-<pair id>, as OpenShell names it).
  std::string name;
  bool running = true;
  std::optional<int64_t> admitted_fence_generation;  // default: the fence's current generation
  bool pods = true;  // create the workload (if running) and supervisor pods
  // `sandboxId`: the logical id (label and annotation openshell.ai/sandbox-id);
  // empty: the name. A spare has none.
  std::string sandbox_id;
  // `podLabels`: the user's template labels. With the two boundary labels
  // OpenShell forces over them they make spec.podTemplate.metadata.labels,
  // which the workload pod carries exactly.
  std::map<std::string, std::string> pod_labels;
  // `warmPair`: the pair id (24 lowercase hex digits) of a warm-pool pair;
  // empty: an ordinary sandbox. Its pods are named by the pair id.
  std::string warm_pair_id;
  bool spare = false;                 // `spare: true`: an unassigned pair, ready in its pool
  std::string warm_pool = "default";  // `warmPool`: the pool's template id
};

struct ScenarioNamespace {
  // Out of line, where boost::json::value is complete.
  ScenarioNamespace();
  ~ScenarioNamespace();
  ScenarioNamespace(const ScenarioNamespace&);
  ScenarioNamespace(ScenarioNamespace&&) noexcept;
  ScenarioNamespace& operator=(const ScenarioNamespace&);
  ScenarioNamespace& operator=(ScenarioNamespace&&) noexcept;

  std::string name;
  bool fence = true;
  int boundary_port = domain::kDefaultBoundaryPort;
  int fence_generation = 1;  // the workload policy is edited until it reaches this generation
  std::vector<ScenarioSandbox> sandboxes;
  // `podBytes`: each pod is grown to about this many bytes of JSON, with many
  // small fields as real pods have (env, conditions), for memory benchmarks.
  // 0 (default): minimal pods.
  size_t pod_bytes = 0;
  // (`generate: {count: N, prefix: sb-}` adds N running sandboxes named
  // <prefix>00000 ... to `sandboxes`: a large fleet without a line each.)
  // `networkPolicies`: more NetworkPolicies of the namespace, whole objects
  // made from each entry's name and spec, created after the sandboxes.
  std::vector<boost::json::value> network_policies;
};

struct Scenario {
  // Out of line, where boost::json::value is complete.
  Scenario();
  ~Scenario();
  Scenario(const Scenario&);
  Scenario(Scenario&&) noexcept;
  Scenario& operator=(const Scenario&);
  Scenario& operator=(Scenario&&) noexcept;

  SimOptions options;
  std::vector<FaultRule> faults;
  std::vector<ScenarioNamespace> namespaces;
  std::vector<boost::json::value> objects;  // raw Kubernetes objects, created in order
};

Result<Scenario> ParseScenario(const std::string& yaml_text, const std::string& source_name);
// `path` may also name a built-in scenario (sim/builtin_scenarios.h), e.g. "incident-3525".
Result<Scenario> ParseScenarioFile(const std::string& path);

// Creates the scenario's objects in the simulator and installs its faults.
Status ApplyScenario(Simulator& sim, const Scenario& scenario);

// YAML -> JSON as Kubernetes reads it: quoted scalars stay strings; plain
// scalars become null, booleans or numbers when they look like one.
Result<boost::json::value> YamlToJson(const std::string& yaml_text);

// Rolls the fence of namespace `ns` the way a policy controller's no-op
// reapply with reordered fields does: flips the order of the workload fence's
// policyTypes, a spec edit that keeps the fence intact, so the API server
// bumps its generation. Returns the new generation (0: `ns` has no fence).
int64_t RollFence(Simulator& sim, const std::string& ns);

// Creates NetworkPolicy `ns`/`name` with `spec`, or replaces the spec of the
// one there (its uid kept; its generation moves if the spec changes). The
// API server's policyTypes defaulting applies (sim/defaults.h).
Status AddNetworkPolicy(Simulator& sim, const std::string& ns, const std::string& name,
                        const boost::json::value& spec);
// Deletes it; NotFound if there is none.
Status DeleteNetworkPolicy(Simulator& sim, const std::string& ns, const std::string& name);
// A namespace-wide "allow DNS" policy as platform teams add one: it selects
// every workload pod (openshell.ai/boundary-role: workload) and allows egress
// to port 53 over UDP and TCP. No policyTypes: the API server makes them
// [Ingress, Egress], so it opens egress past the fence's `egress: []`.
boost::json::value AllowDnsEgressSpec();

// The intended NetworkPolicy specs (docs/design.md#the-fence).
boost::json::value IntendedWorkloadPolicy(const std::string& ns, int boundary_port);
boost::json::value IntendedSupervisorPolicy(const std::string& ns);
// A pod labelled openshell.ai/boundary-role=`role`, padded with realistic
// fields to about `bytes` of JSON (0: minimal).
boost::json::value BoundaryPod(const std::string& ns, const std::string& name, const char* role,
                               size_t bytes = 0);

}  // namespace fk::sim
