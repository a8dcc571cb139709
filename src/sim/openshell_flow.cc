#include "sim/openshell_flow.h"

#include <boost/json.hpp>
#include <optional>

#include "kube/json_fields.h"
#include "kube/objects.h"
#include "sim/flow_requests.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "sim/scenario_objects.h"
#include "sim/store.h"

namespace fk::sim {
namespace json = boost::json;

namespace {

using kube::kBootstrapPhaseAnnotation;
using kube::kBootstrapStartedAtAnnotation;

// OpenShell's API calls for one sandbox, through the simulator's request
// handling (counted, faults applied) exactly as over HTTP.
class FlowApi {
 public:
  FlowApi(Simulator& sim, const std::string& ns)
      : sim_(sim),
        sandboxes_("/apis/agents.x-k8s.io/v1beta1/namespaces/" + ns + "/sandboxes/"),
        pods_("/api/v1/namespaces/" + ns + "/pods/"),
        policies_("/apis/networking.k8s.io/v1/namespaces/" + ns + "/networkpolicies/"),
        ns_(ns) {}

  std::string PodUid(const std::string& pod) {
    ApiReply r = Call("GET", pods_ + pod);
    if (r.status != 200) return "";
    return kube::MetadataString(json::parse(r.body), "uid");
  }
  std::pair<std::string, int64_t> WorkloadFence() {
    ApiReply r = Call("GET", policies_ + "openshell-sandbox-workloads");
    if (r.status != 200) return {"", 0};
    const json::value p = json::parse(r.body);
    return {kube::MetadataString(p, "uid"), p.at("metadata").at("generation").as_int64()};
  }
  void NewGatedSupervisor(const std::string& name, const std::string& resource_id) {
    json::object pod = LabelledPod(ns_, name, SupervisorLabels(resource_id), 0).as_object();
    pod["spec"].as_object()["schedulingGates"] = AdmissionGates();
    Call("POST", pods_.substr(0, pods_.size() - 1), json::serialize(pod));
  }
  void DeletePod(const std::string& name) { Call("DELETE", pods_ + name); }
  void PatchPod(const std::string& name, const json::value& patch) {
    Call("PATCH", pods_ + name, json::serialize(patch), "application/merge-patch+json");
  }
  void PatchSandbox(const std::string& name, const json::value& patch) {
    Call("PATCH", sandboxes_ + name, json::serialize(patch), "application/merge-patch+json");
  }

 private:
  ApiReply Call(const char* method, const std::string& target, const std::string& body = "",
                const std::string& type = "application/json") {
    return HandleRequest(sim_, ApiRequest{method, target, body, type}, "sim");
  }

  Simulator& sim_;
  const std::string sandboxes_, pods_, policies_, ns_;
};

// The supervisor pod, which OpenShell names by the sandbox's resource id
// (a claimed pair's pair id, not its name or logical id), and that id; a
// sandbox with neither id (made by hand) by its name. Read from the store,
// not requested: OpenShell knows its own sandboxes' ids.
std::pair<std::string, std::string> Supervisor(Simulator& sim, const OpenShellFlow& f) {
  std::string id =
      ResourceIdOf(sim.store().Get(*FindKind("agents.x-k8s.io", "sandboxes"), f.ns, f.name).object);
  if (id.empty()) id = f.name;
  return {kube::kSupervisorPodPrefix + id, id};
}

json::value Annotations(json::object annotations) {
  return {{"metadata", {{"annotations", std::move(annotations)}}}};
}

// Step 1: Running, with the template's gate so the new workload pod starts
// gated; a resume sets it as a bootstrap in the same PATCH.
std::string SetRunning(Simulator& sim, FlowApi& api, OpenShellFlow& f, const std::string& sup) {
  std::tie(f.fence_uid, f.fence_generation) = api.WorkloadFence();
  json::object patch{{"spec",
                      {{"operatingMode", "Running"},
                       {"podTemplate", {{"spec", {{"schedulingGates", AdmissionGates()}}}}}}}};
  if (f.type == OpenShellFlow::Type::kResume) {
    json::object annotations = BootstrapAnnotations("restart", sim.clock().NowMs());
    annotations[kube::kSupervisorUidAnnotation] = api.PodUid(sup);
    patch["metadata"] = {{"annotations", std::move(annotations)}};
  }
  api.PatchSandbox(f.name, patch);
  return "Running";
}

// Step 2, once the workload pod exists: the fence (a resume reads the current
// one again) and both pods' uids, recorded late as OpenShell does.
std::string RecordAdmission(FlowApi& api, OpenShellFlow& f, const std::string& sup) {
  const std::string pod = api.PodUid(f.name);
  if (pod.empty()) return "";  // not yet: agent-sandbox has not created it
  if (f.type == OpenShellFlow::Type::kResume)
    std::tie(f.fence_uid, f.fence_generation) = api.WorkloadFence();
  api.PatchSandbox(
      f.name, Annotations({{kube::kFenceUidAnnotation, f.fence_uid},
                           {kube::kFenceGenerationAnnotation, std::to_string(f.fence_generation)},
                           {kube::kWorkloadUidAnnotation, pod},
                           {kube::kSupervisorUidAnnotation, api.PodUid(sup)}}));
  return "fence and pod annotations";
}

}  // namespace

json::array AdmissionGates() { return json::array{{{"name", "openshell.ai/admission"}}}; }

std::string AdvanceOpenShellFlow(Simulator& sim, OpenShellFlow& f) {
  FlowApi api(sim, f.ns);
  const auto [sup, resource_id] = Supervisor(sim, f);
  std::string did;
  switch (f.step) {
    case 0:
      api.DeletePod(sup);
      api.NewGatedSupervisor(sup, resource_id);
      did = "new gated supervisor pod";
      break;
    case 1:
      did = SetRunning(sim, api, f, sup);
      break;
    case 2:
      did = RecordAdmission(api, f, sup);
      if (did.empty()) return did;
      break;
    case 3:
      api.PatchPod(f.name, {{"spec", {{"schedulingGates", json::array{}}}}});
      api.PatchPod(sup, {{"spec", {{"schedulingGates", json::array{}}}}});
      did = "un-gate pods";
      break;
    case 4:
      api.PatchSandbox(f.name, Annotations({{kBootstrapPhaseAnnotation, "released"}}));
      did = "phase released";
      break;
    default:
      api.PatchSandbox(f.name, Annotations({{kube::kBootstrappingAnnotation, nullptr},
                                            {kube::kBootstrapOperationAnnotation, nullptr},
                                            {kBootstrapPhaseAnnotation, nullptr},
                                            {kBootstrapStartedAtAnnotation, nullptr},
                                            {kFlowRequestAnnotation, nullptr}}));
      did = "bootstrap complete";
      break;
  }
  ++f.step;
  return did;
}

}  // namespace fk::sim
