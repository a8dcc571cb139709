// ApplyScenario: a parsed scenario's namespaces expanded into the objects
// OpenShell would have made (fences, sandboxes, their pods), then its raw
// objects and faults, created through the store as any client's would be.
#include <algorithm>
#include <boost/json.hpp>

#include "kube/json_fields.h"
#include "kube/objects.h"
#include "sim/scenario.h"
#include "sim/scenario_objects.h"
#include "sim/store.h"

namespace fk::sim {
namespace json = boost::json;

namespace {

Status Check(const Outcome& o, const std::string& what) {
  if (o.ok()) return Status::Ok();
  return Status::InvalidArgument("scenario: cannot create " + what + ": " + o.failure->message);
}

std::string Uid(const json::value& obj) {
  return std::string(obj.at("metadata").at("uid").as_string());
}

// The fence a namespace's sandboxes were admitted under (empty if it has none).
struct CreatedFence {
  std::string uid;
  int64_t generation = 0;
};

Status CreateFence(Store& store, const ScenarioNamespace& ns, CreatedFence* fence) {
  const ResourceKind* policies = FindKind("networking.k8s.io", "networkpolicies");
  // Generation N takes N-1 spec edits after the create. Alternate the
  // boundary port so that the last edit restores the intended spec:
  // version i (0 = create) carries the intended port iff (edits - i) is even.
  const int edits = std::max(0, ns.fence_generation - 1);
  auto port_at = [&](int i) {
    return (edits - i) % 2 == 0 ? ns.boundary_port : ns.boundary_port + 1;
  };
  Outcome w = store.Create(*policies, ns.name, IntendedWorkloadPolicy(ns.name, port_at(0)));
  if (auto s = Check(w, ns.name + "/openshell-sandbox-workloads"); !s.ok()) return s;
  for (int i = 1; i <= edits; ++i) {
    w = store.Mutate(
        *policies, ns.name, "openshell-sandbox-workloads",
        [&](json::value& obj) -> std::optional<ApiFailure> {
          obj.at("spec").at("ingress").at(0).at("ports").at(0).as_object()["port"] = port_at(i);
          return std::nullopt;
        },
        false);
  }
  if (auto s = Check(store.Create(*policies, ns.name, IntendedSupervisorPolicy(ns.name)),
                     ns.name + "/openshell-sandbox-supervisors");
      !s.ok())
    return s;
  fence->uid = Uid(w.object);
  fence->generation = w.object.at("metadata").at("generation").as_int64();
  return Status::Ok();
}

// The boundary pods of one sandbox, as OpenShell names and labels them; their
// UIDs go into the sandbox's annotations ("gone-..." when there are none).
Status CreatePods(Store& store, const ScenarioNamespace& ns, const ScenarioSandbox& sb,
                  std::string* workload_uid, std::string* supervisor_uid) {
  const ResourceKind* pods = FindKind("", "pods");
  const SandboxNames names = NamesOf(sb);
  *workload_uid = "gone-" + names.sandbox;
  *supervisor_uid = "gone-sup-" + names.sandbox;
  if (!sb.pods) return Status::Ok();
  if (sb.running) {
    Outcome p = store.Create(*pods, ns.name,
                             LabelledPod(ns.name, names.sandbox, WorkloadLabels(sb), ns.pod_bytes));
    if (auto s = Check(p, "pod " + names.sandbox); !s.ok()) return s;
    *workload_uid = Uid(p.object);
  }
  Outcome sp = store.Create(
      *pods, ns.name,
      LabelledPod(ns.name, names.supervisor, SupervisorLabels(names.resource_id), ns.pod_bytes));
  if (auto s = Check(sp, "supervisor pod of " + names.sandbox); !s.ok()) return s;
  *supervisor_uid = Uid(sp.object);
  return Status::Ok();
}

Status CreateSandbox(Store& store, const ScenarioNamespace& ns, const ScenarioSandbox& sb,
                     const CreatedFence& fence, int64_t now_ms) {
  std::string workload_uid, supervisor_uid;
  if (auto s = CreatePods(store, ns, sb, &workload_uid, &supervisor_uid); !s.ok()) return s;
  json::object annotations{{kube::kWorkloadUidAnnotation, workload_uid},
                           {kube::kSupervisorUidAnnotation, supervisor_uid},
                           {kube::kReadinessAnnotation, sb.running ? "ready" : "unavailable"}};
  if (ns.fence) {
    annotations[kube::kFenceUidAnnotation] = fence.uid;
    annotations[kube::kFenceGenerationAnnotation] =
        std::to_string(sb.admitted_fence_generation.value_or(fence.generation));
  }
  return Check(store.Create(*FindKind("agents.x-k8s.io", "sandboxes"), ns.name,
                            SandboxObject(ns.name, sb, std::move(annotations), now_ms)),
               "sandbox " + NamesOf(sb).sandbox);
}

Status CreateNamespace(Store& store, const ScenarioNamespace& ns, int64_t now_ms) {
  if (auto s = Check(store.Create(*FindKind("", "namespaces"), "",
                                  json::object{{"metadata", {{"name", ns.name}}}}),
                     "namespace " + ns.name);
      !s.ok())
    return s;
  CreatedFence fence;
  if (ns.fence) {
    if (auto s = CreateFence(store, ns, &fence); !s.ok()) return s;
  }
  for (const ScenarioSandbox& sb : ns.sandboxes) {
    if (auto s = CreateSandbox(store, ns, sb, fence, now_ms); !s.ok()) return s;
  }
  const ResourceKind* policies = FindKind("networking.k8s.io", "networkpolicies");
  for (const json::value& policy : ns.network_policies) {
    if (auto s = Check(store.Create(*policies, ns.name, policy),
                       ns.name + "/" + kube::MetadataString(policy, "name"));
        !s.ok())
      return s;
  }
  return Status::Ok();
}

// One of the scenario's `objects`, in any kind and version the simulator serves.
Status CreateObject(Store& store, const json::value& obj) {
  if (!obj.is_object()) return Status::InvalidArgument("scenario: objects must be mappings");
  const auto* av = obj.get_object().if_contains("apiVersion");
  const auto* k = obj.get_object().if_contains("kind");
  if (!av || !k || !av->is_string() || !k->is_string()) {
    return Status::InvalidArgument("scenario: every object needs apiVersion and kind");
  }
  const std::string api_version(av->get_string());
  const ResourceKind* kind = FindKindByKind(api_version, std::string(k->get_string()));
  if (!kind) {
    return Status::InvalidArgument("scenario: the simulator does not serve " + api_version + " " +
                                   std::string(k->get_string()));
  }
  std::string ns;
  if (const auto* m = obj.get_object().if_contains("metadata"); m && m->is_object()) {
    if (const auto* n = m->get_object().if_contains("namespace"); n && n->is_string())
      ns = n->get_string();
  }
  if (kind->namespaced && ns.empty()) ns = "default";
  const std::string version = api_version.substr(api_version.find('/') + 1);
  return Check(store.Create(*kind, ns, Simulator::FromVersion(*kind, obj, version)), kind->kind);
}

}  // namespace

Status ApplyScenario(Simulator& sim, const Scenario& sc) {
  for (const ScenarioNamespace& ns : sc.namespaces) {
    if (auto s = CreateNamespace(sim.store(), ns, sim.clock().NowMs()); !s.ok()) return s;
  }
  for (const json::value& obj : sc.objects) {
    if (auto s = CreateObject(sim.store(), obj); !s.ok()) return s;
  }
  for (const FaultRule& f : sc.faults) sim.AddFault(f);
  return Status::Ok();
}

}  // namespace fk::sim
