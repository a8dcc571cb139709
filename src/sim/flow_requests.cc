#include "sim/flow_requests.h"

#include <algorithm>
#include <boost/json.hpp>

#include "kube/json_fields.h"
#include "kube/objects.h"
#include "sim/handler.h"
#include "sim/selector.h"
#include "sim/simulator.h"
#include "sim/store.h"

namespace fk::sim {
namespace json = boost::json;

namespace {

const ResourceKind& Sandboxes() { return *FindKind("agents.x-k8s.io", "sandboxes"); }

std::string AnnotationOf(const json::value& obj, const char* key) {
  return kube::StringField(kube::ObjectField(kube::ObjectField(obj, "metadata"), "annotations"),
                           key)
      .value_or("");
}

void PatchSandbox(Simulator& sim, const std::string& ns, const std::string& name,
                  const json::value& patch) {
  HandleRequest(
      sim,
      ApiRequest{"PATCH", "/apis/agents.x-k8s.io/v1beta1/namespaces/" + ns + "/sandboxes/" + name,
                 json::serialize(patch), "application/merge-patch+json"},
      "sim");
}

// Why OpenShell would refuse `request` for `sandbox` now ("" if it would not):
// `openshell sandbox start` resumes only a suspended sandbox, and only behind
// both fence policies as intended (it never repairs an edited one).
std::string Refusal(Simulator& sim, const json::value& sandbox, const std::string& request,
                    int boundary_port) {
  if (request != "create" && request != "resume")
    return "unknown flow '" + request + "': the simulator plays create or resume";
  if (request == "create") return "";
  const std::string ns = kube::MetadataString(sandbox, "namespace");
  if (kube::StringField(kube::ObjectField(sandbox, "spec"), "operatingMode").value_or("") !=
      "Suspended")
    return "resume: the sandbox is not suspended";
  const ResourceKind& policies = *FindKind("networking.k8s.io", "networkpolicies");
  for (const auto& [fence, role] :
       {std::pair{"openshell-sandbox-workloads", kube::PolicyRole::kWorkload},
        std::pair{"openshell-sandbox-supervisors", kube::PolicyRole::kSupervisor}}) {
    const Outcome policy = sim.store().Get(policies, ns, fence);
    if (!policy.ok()) return std::string("resume: the fence policy ") + fence + " is missing";
    auto observed = kube::ParsePolicy(&policy.object, role, boundary_port);
    if (!observed.ok() || !observed->intact)
      return std::string("resume: the fence policy ") + fence +
             " is not the intended one (restore it; OpenShell does not resume behind an edited "
             "fence)";
  }
  return "";
}

// Why a flow in progress cannot go on ("" if it can): its sandbox is gone,
// or was suspended after the flow set it Running (its workload pod will not
// come; OpenShell's bootstrap would stall the same way).
std::string Abandoned(Simulator& sim, const OpenShellFlow& f) {
  const Outcome sandbox = sim.store().Get(Sandboxes(), f.ns, f.name);
  if (!sandbox.ok()) return "the sandbox was deleted";
  const bool suspended =
      kube::StringField(kube::ObjectField(sandbox.object, "spec"), "operatingMode").value_or("") ==
      "Suspended";
  return f.step >= 2 && suspended ? "the sandbox was suspended during the flow" : "";
}

// One line of what a tick did: "ns/name: what".
std::string Said(const std::string& ns, const std::string& name, const std::string& what) {
  std::string line = ns;
  line += '/';
  line += name;
  line += ": ";
  line += what;
  return line;
}

}  // namespace

FlowRequests::FlowRequests(Simulator& sim, std::map<std::string, int> boundary_ports)
    : sim_(sim),
      boundary_ports_(std::move(boundary_ports)),
      maybe_requested_(std::make_shared<std::atomic<bool>>(true)) {
  sim_.store().AddHook([flag = maybe_requested_](const StoredEvent& e) {
    if (e.kind->plural == "sandboxes" && e.type != "DELETED" &&
        !AnnotationOf(e.object, kFlowRequestAnnotation).empty())
      flag->store(true);
  });
}

std::vector<std::string> FlowRequests::Tick() {
  std::vector<std::string> lines;
  for (OpenShellFlow& f : flows_) {
    const std::string flow = f.type == OpenShellFlow::Type::kCreate ? "create: " : "resume: ";
    if (const std::string why = Abandoned(sim_, f); !why.empty()) {
      const std::string abandoned = "abandoned: " + why;
      Refuse(f.ns, f.name, flow + abandoned);
      lines.push_back(Said(f.ns, f.name, abandoned));
      f.step = OpenShellFlow::kSteps;
      continue;
    }
    const std::string did = AdvanceOpenShellFlow(sim_, f);
    if (!did.empty()) lines.push_back(Said(f.ns, f.name, flow + did));
  }
  flows_.erase(
      std::remove_if(flows_.begin(), flows_.end(), [](const OpenShellFlow& f) { return f.Done(); }),
      flows_.end());
  for (std::string& line : TakeRequests()) lines.push_back(std::move(line));
  return lines;
}

std::vector<std::string> FlowRequests::TakeRequests() {
  std::vector<std::string> lines;
  if (!maybe_requested_->exchange(false)) return lines;
  const ListOutcome all = sim_.store().List(Sandboxes(), "", Selector(), Selector());
  for (const json::value& sandbox : all.items) {
    const std::string request = AnnotationOf(sandbox, kFlowRequestAnnotation);
    if (request.empty()) continue;
    const std::string ns = kube::MetadataString(sandbox, "namespace");
    const std::string name = kube::MetadataString(sandbox, "name");
    const bool busy = std::any_of(flows_.begin(), flows_.end(), [&](const OpenShellFlow& f) {
      return f.ns == ns && f.name == name;
    });
    if (busy) continue;
    const auto port = boundary_ports_.find(ns);
    const std::string why =
        Refusal(sim_, sandbox, request,
                port == boundary_ports_.end() ? domain::kDefaultBoundaryPort : port->second);
    if (!why.empty()) {
      Refuse(ns, name, why);
      lines.push_back(Said(ns, name, "refused: " + why));
      continue;
    }
    lines.push_back(
        Start(ns, name, request, !AnnotationOf(sandbox, kFlowRefusedAnnotation).empty()));
  }
  return lines;
}

// Removes the request and says why it was not (or no longer) played, if the
// sandbox still exists.
void FlowRequests::Refuse(const std::string& ns, const std::string& name, const std::string& why) {
  if (!sim_.store().Get(Sandboxes(), ns, name).ok()) return;
  PatchSandbox(
      sim_, ns, name,
      {{"metadata",
        {{"annotations", {{kFlowRequestAnnotation, nullptr}, {kFlowRefusedAnnotation, why}}}}}});
}

// Starts the flow; a create first makes the sandbox what OpenShell POSTs:
// suspended and bootstrapping (operation create, phase preparing), its
// template gated.
std::string FlowRequests::Start(const std::string& ns, const std::string& name,
                                const std::string& request, bool was_refused) {
  const bool create = request == "create";
  json::object annotations;
  if (create) annotations = BootstrapAnnotations("create", sim_.clock().NowMs());
  if (was_refused) annotations[kFlowRefusedAnnotation] = nullptr;
  json::object patch{{"metadata", {{"annotations", std::move(annotations)}}}};
  if (create) {
    patch["spec"] = {{"operatingMode", "Suspended"},
                     {"podTemplate", {{"spec", {{"schedulingGates", AdmissionGates()}}}}}};
  }
  // A resume sends nothing here: OpenShell's first write is its supervisor pod.
  if (create || was_refused) PatchSandbox(sim_, ns, name, patch);
  flows_.push_back(
      {create ? OpenShellFlow::Type::kCreate : OpenShellFlow::Type::kResume, ns, name, 0, "", 0});
  return Said(ns, name,
              request + (create ? ": started (suspended and bootstrapping, as OpenShell creates it)"
                                : ": started"));
}

FlowTicker::FlowTicker(Simulator& sim, std::map<std::string, int> boundary_ports,
                       std::chrono::milliseconds step,
                       std::function<void(const std::string&)> report)
    : requests_(sim, std::move(boundary_ports)),
      report_(std::move(report)),
      thread_([this, step] { Loop(step); }) {}

FlowTicker::~FlowTicker() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void FlowTicker::Loop(std::chrono::milliseconds step) {
  std::unique_lock lock(mu_);
  while (!cv_.wait_for(lock, step, [&] { return stopping_; })) {
    for (const std::string& line : requests_.Tick()) report_(line);
  }
}

}  // namespace fk::sim
