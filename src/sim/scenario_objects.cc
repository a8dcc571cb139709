// The objects OpenShell makes, as the simulator builds them for scenarios,
// flows and tests: its two NetworkPolicies, the boundary pods and the
// Sandboxes (sim/scenario_objects.h). JSON only: nothing here touches the store.
#include "sim/scenario_objects.h"

#include <boost/json.hpp>
#include <cstdio>
#include <string_view>

#include "kube/json_fields.h"
#include "kube/objects.h"
#include "sim/openshell_flow.h"

namespace fk::sim {
namespace json = boost::json;

// Declared in sim/openshell_flow.h; defined here, beside the objects it
// annotates, so the scenario decoders link without the request handler.
json::object BootstrapAnnotations(const char* operation, int64_t now_ms) {
  return {{kube::kBootstrappingAnnotation, "true"},
          {kube::kBootstrapOperationAnnotation, operation},
          {kube::kBootstrapPhaseAnnotation, "preparing"},
          {kube::kBootstrapStartedAtAnnotation, std::to_string(now_ms)}};
}

namespace {

using kube::kBoundaryRoleLabel;
using kube::kWarmPairIdKey;
using kube::kWarmPoolLabel;

// Labels OpenShell writes that fencekeeper does not read (those it reads are
// named in kube/objects.h).
constexpr const char* kManagedByLabel = "openshell.ai/managed-by";
constexpr const char* kBoundaryPairLabel = "openshell.ai/boundary-pair";
constexpr const char* kWarmPoolStateLabel = "openshell.ai/warm-pool-state";
constexpr const char* kTemplateIdLabel = "openshell.ai/template-id";
constexpr const char* kSandboxNameLabel = "openshell.ai/sandbox-name";

std::string Lower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

uint64_t Fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

json::value IntendedWorkloadPolicy(const std::string& ns, int boundary_port) {
  return json::object{
      {"apiVersion", "networking.k8s.io/v1"},
      {"kind", "NetworkPolicy"},
      {"metadata",
       {{"name", "openshell-sandbox-workloads"},
        {"namespace", ns},
        {"labels",
         {{"openshell.ai/managed-by", "openshell"},
          {"openshell.ai/component", "sandbox-workload-fence"}}}}},
      {"spec",
       {{"podSelector", {{"matchLabels", {{"openshell.ai/boundary-role", "workload"}}}}},
        {"policyTypes", json::array{"Ingress", "Egress"}},
        {"ingress",
         json::array{{{"from", json::array{{{"podSelector",
                                             {{"matchLabels",
                                               {{"openshell.ai/boundary-role", "supervisor"}}}}}}}},
                      {"ports", json::array{{{"protocol", "TCP"}, {"port", boundary_port}}}}}}},
        {"egress", json::array{}}}}};
}

json::value IntendedSupervisorPolicy(const std::string& ns) {
  return json::object{
      {"apiVersion", "networking.k8s.io/v1"},
      {"kind", "NetworkPolicy"},
      {"metadata",
       {{"name", "openshell-sandbox-supervisors"},
        {"namespace", ns},
        {"labels",
         {{"openshell.ai/managed-by", "openshell"},
          {"openshell.ai/component", "sandbox-supervisor-egress"}}}}},
      {"spec",
       {{"podSelector", {{"matchLabels", {{"openshell.ai/boundary-role", "supervisor"}}}}},
        {"policyTypes", json::array{"Egress"}},
        {"egress", json::array{json::object{}}}}}};
}

namespace {

// Grows a pod to about `bytes` of JSON the way real pods are large: many
// small fields (environment variables, status conditions), not one string,
// so a parser builds as many nodes as it would for a real pod.
void PadPod(json::object& pod, size_t bytes) {
  json::object& container = pod.at("spec").at("containers").at(0).as_object();
  json::array& env = container["env"].emplace_array();
  json::array& conditions = pod["status"].emplace_object()["conditions"].emplace_array();
  size_t size = json::serialize(pod).size();
  for (int i = 0; size < bytes; ++i) {
    json::object item = i % 4 == 3
                            ? json::object{{"type", "Condition" + std::to_string(i)},
                                           {"status", "True"},
                                           {"lastTransitionTime", "2026-01-01T00:00:00Z"}}
                            : json::object{{"name", "OPENSHELL_SETTING_" + std::to_string(i)},
                                           {"value", "value-of-setting-" + std::to_string(i)}};
    size += json::serialize(item).size() + 1;
    (i % 4 == 3 ? conditions : env).push_back(std::move(item));
  }
}

}  // namespace

json::value LabelledPod(const std::string& ns, const std::string& name, json::object labels,
                        size_t bytes) {
  json::object pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
      {"spec", {{"containers", json::array{{{"name", "main"}, {"image", "agent:latest"}}}}}}};
  if (bytes) PadPod(pod, bytes);
  return pod;
}

json::value BoundaryPod(const std::string& ns, const std::string& name, const char* role,
                        size_t bytes) {
  return LabelledPod(ns, name, {{kBoundaryRoleLabel, role}}, bytes);
}

bool IsWarmPairId(const std::string& text) {
  return text.size() == 24 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

std::string DerivedWarmPairId(const std::string& name) {
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(Fnv1a64(name)),
                static_cast<unsigned long long>(Fnv1a64("warm-pair:" + name)));
  return std::string(hex, 24);
}

SandboxNames NamesOf(const ScenarioSandbox& sb) {
  SandboxNames n;
  const bool pair = !sb.warm_pair_id.empty();
  n.sandbox = pair ? "warm-" + sb.warm_pair_id : sb.name;
  if (!sb.spare) n.sandbox_id = sb.sandbox_id.empty() ? sb.name : sb.sandbox_id;
  // A claimed pair keeps the physical pair id its pods are named by, while
  // its sandbox id becomes the logical one (reference A.1, A.3).
  n.resource_id = Lower(pair ? sb.warm_pair_id : n.sandbox_id);
  n.supervisor = kube::kSupervisorPodPrefix + n.resource_id;
  return n;
}

json::object WorkloadLabels(const ScenarioSandbox& sb) {
  json::object labels;
  for (const auto& [key, value] : sb.pod_labels) labels[key] = value;
  // Forced over the user's (reference D.2): a user cannot relabel a workload
  // pod as a supervisor.
  labels[kBoundaryRoleLabel] = "workload";
  labels[kBoundaryPairLabel] = NamesOf(sb).resource_id;
  return labels;
}

json::object SupervisorLabels(const std::string& resource_id) {
  return {{kBoundaryRoleLabel, "supervisor"},
          {kBoundaryPairLabel, resource_id},
          {kManagedByLabel, "openshell"}};
}

std::string ResourceIdOf(const json::value& sandbox) {
  const json::object* meta = kube::ObjectField(sandbox, "metadata");
  for (const char* key : {kWarmPairIdKey, kube::kSandboxIdLabel}) {
    auto id = kube::StringField(kube::ObjectField(meta, "annotations"), key);
    if (!id) id = kube::StringField(kube::ObjectField(meta, "labels"), key);
    if (id && !id->empty()) return Lower(*id);
  }
  return "";
}

namespace {

// What a warm-pool pair carries besides an ordinary sandbox's.
void AddPairMetadata(const ScenarioSandbox& sb, const SandboxNames& names, json::object& labels,
                     json::object& annotations, int64_t now_ms) {
  annotations[kWarmPairIdKey] = sb.warm_pair_id;  // kept by the claim (reference B.2)
  labels[kTemplateIdLabel] = sb.warm_pool;
  if (sb.spare) {
    // Prepared and ready in its pool (reference B.1): its bootstrap released
    // and never completed, under the fence of its preparation.
    labels[kWarmPoolLabel] = sb.warm_pool;
    labels[kWarmPoolStateLabel] = "ready";
    labels[kSandboxNameLabel] = names.sandbox;
    for (auto& [key, value] : BootstrapAnnotations("create", now_ms)) annotations[key] = value;
    annotations[kube::kBootstrapPhaseAnnotation] = "released";
    return;
  }
  // Claimed (reference B.2): the claim's merge patch removed the pool and
  // state labels and set the logical id and name.
  labels[kSandboxNameLabel] = sb.name;
  annotations[kube::kSandboxIdLabel] = names.sandbox_id;
  annotations[kSandboxNameLabel] = sb.name;
}

}  // namespace

json::value SandboxObject(const std::string& ns, const ScenarioSandbox& sb,
                          json::object annotations, int64_t now_ms) {
  const SandboxNames names = NamesOf(sb);
  json::object labels{{kManagedByLabel, "openshell"}};
  if (!names.sandbox_id.empty()) labels[kube::kSandboxIdLabel] = names.sandbox_id;
  if (!sb.warm_pair_id.empty()) AddPairMetadata(sb, names, labels, annotations, now_ms);
  return json::object{
      {"apiVersion", "agents.x-k8s.io/v1beta1"},
      {"kind", "Sandbox"},
      {"metadata",
       {{"name", names.sandbox},
        {"namespace", ns},
        {"labels", std::move(labels)},
        {"annotations", std::move(annotations)}}},
      {"spec",
       {{"operatingMode", sb.running ? "Running" : "Suspended"},
        {"podTemplate",
         {{"metadata", {{"labels", WorkloadLabels(sb)}}},
          {"spec",
           {{"containers", json::array{{{"name", "agent"}, {"image", "agent:latest"}}}}}}}}}}};
}

json::value AllowDnsEgressSpec() {
  return json::object{
      {"podSelector", {{"matchLabels", {{kBoundaryRoleLabel, "workload"}}}}},
      {"egress", json::array{{{"ports", json::array{{{"protocol", "UDP"}, {"port", 53}},
                                                    {{"protocol", "TCP"}, {"port", 53}}}}}}}};
}

json::value NetworkPolicyObject(const std::string& ns, const std::string& name,
                                const json::value& spec) {
  return json::object{{"apiVersion", "networking.k8s.io/v1"},
                      {"kind", "NetworkPolicy"},
                      {"metadata", {{"name", name}, {"namespace", ns}}},
                      {"spec", spec}};
}

}  // namespace fk::sim
