// The objects OpenShell makes, as the simulator builds them for scenarios,
// flows and tests: its two NetworkPolicies and the boundary pods. JSON only:
// nothing here touches the store.
#include <boost/json.hpp>

#include "sim/scenario.h"

namespace fk::sim {
namespace json = boost::json;

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

json::value BoundaryPod(const std::string& ns, const std::string& name, const char* role,
                        size_t bytes) {
  json::object pod{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name}, {"namespace", ns}, {"labels", {{"openshell.ai/boundary-role", role}}}}},
      {"spec", {{"containers", json::array{{{"name", "main"}, {"image", "agent:latest"}}}}}}};
  if (bytes) PadPod(pod, bytes);
  return pod;
}

}  // namespace fk::sim
