#include "sim/simulator.h"

#include <boost/json.hpp>

#include "sim/store.h"

#include "kube/json_fields.h"
#include "kube/objects.h"
#include "sim/event_views.h"

namespace fk::sim {
namespace json = boost::json;

namespace {

using kube::ObjectField;

std::string StringAt(const json::object* o, const char* key) {
  return kube::StringField(o, key).value_or("");
}

bool IsSuspended(const json::value& sandbox) {
  const json::object* spec = ObjectField(sandbox, "spec");
  const json::value* mode = spec ? spec->if_contains("operatingMode") : nullptr;
  return mode && mode->is_string() && mode->get_string() == "Suspended";
}

json::object Condition(const char* type, const char* status, const char* reason,
                       const char* message, int64_t generation, const std::string& now) {
  return {{"type", type},
          {"status", status},
          {"reason", reason},
          {"message", message},
          {"observedGeneration", generation},
          {"lastTransitionTime", now}};
}

// The scheduling gates of a sandbox's pod template (OpenShell's template
// carries its admission gate), which the pod made from it starts with.
json::value TemplateGates(const json::value& sandbox) {
  const json::object* spec = ObjectField(sandbox, "spec");
  const json::object* pod_spec = ObjectField(ObjectField(spec, "podTemplate"), "spec");
  const json::value* gates = pod_spec ? pod_spec->if_contains("schedulingGates") : nullptr;
  return gates && gates->is_array() && !gates->as_array().empty() ? *gates : json::value();
}

// The labels of the pod made from a sandbox's template: the template's
// (OpenShell writes its boundary labels and the user's there), or, for a
// sandbox written without any (by hand, by a test), the boundary role alone,
// so that fencekeeper still finds its pod.
json::object TemplateLabels(const json::value& sandbox) {
  const json::object* spec = ObjectField(sandbox, "spec");
  const json::object* meta = ObjectField(ObjectField(spec, "podTemplate"), "metadata");
  const json::object* labels = ObjectField(meta, "labels");
  if (!labels) return {{"openshell.ai/boundary-role", "workload"}};
  json::object out;
  for (const auto& [key, value] : *labels) {
    if (value.is_string()) out[key] = value;
  }
  return out;
}

// The pod agent-sandbox creates for a running sandbox, owned by it, labelled
// and gated as its template says.
json::value WorkloadPod(const std::string& ns, const std::string& pod_name,
                        const json::value& sandbox) {
  const std::string name = kube::MetadataString(sandbox, "name");
  const std::string uid = kube::MetadataString(sandbox, "uid");
  json::object spec{{"containers", json::array{{{"name", "agent"}, {"image", "agent:latest"}}}}};
  if (json::value gates = TemplateGates(sandbox); !gates.is_null())
    spec["schedulingGates"] = std::move(gates);
  return json::object{{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata",
                       {{"name", pod_name},
                        {"namespace", ns},
                        {"labels", TemplateLabels(sandbox)},
                        {"ownerReferences", json::array{{{"apiVersion", "agents.x-k8s.io/v1beta1"},
                                                         {"kind", "Sandbox"},
                                                         {"name", name},
                                                         {"uid", uid},
                                                         {"controller", true}}}}}},
                      {"spec", std::move(spec)}};
}

json::array SandboxConditions(bool suspended, int64_t generation, const std::string& now) {
  if (suspended) {
    return json::array{
        Condition("Ready", "False", "SandboxSuspended", "Sandbox is suspended", generation, now),
        Condition("Suspended", "True", "PodTerminated",
                  "Pod has been terminated. Sandbox is suspended", generation, now)};
  }
  return json::array{
      Condition("Ready", "True", "DependenciesReady", "Pod is Ready", generation, now),
      Condition("Suspended", "False", "NotSuspended", "Sandbox is not suspended", generation, now)};
}

// Keeps lastTransitionTime of a condition whose type and status are unchanged,
// as Kubernetes controllers do.
void KeepTransitionTimes(const json::object& status, json::array& conditions) {
  const json::value* old = status.if_contains("conditions");
  if (!old || !old->is_array()) return;
  for (auto& c : conditions) {
    for (const auto& o : old->get_array()) {
      if (!o.is_object()) continue;
      const auto& oo = o.get_object();
      auto& co = c.get_object();
      if (oo.contains("type") && oo.at("type") == co.at("type") && oo.contains("status") &&
          oo.at("status") == co.at("status") && oo.contains("lastTransitionTime")) {
        co["lastTransitionTime"] = oo.at("lastTransitionTime");
      }
    }
  }
}

}  // namespace

struct Simulator::Held {
  Held(const TimeSource& clock, const SimOptions& options)
      : store(clock, options.history_limit, options.uid_seed) {}

  Store store;
  std::map<const ResourceKind*, ListOutcome> stale_lists;
};

Simulator::Simulator(SimOptions options, const TimeSource& clock)
    : options_(options), clock_(clock), held_(std::make_unique<Held>(clock, options)) {
  if (options_.emulate_agent_sandbox) {
    store().AddHook([this](const StoredEvent& e) { EmulateAgentSandbox(e); });
  }
}

Simulator::~Simulator() = default;

Store& Simulator::store() { return held_->store; }

void Simulator::ExpireHistory() { store().ExpireHistory(); }

// What the agent-sandbox controller does that fencekeeper can observe: a
// suspended sandbox loses its pod and reports Suspended=True; a running one
// gets a pod (a new one, with a new UID) and reports Ready=True; a deleted
// one's pod is garbage-collected.
void Simulator::EmulateAgentSandbox(const StoredEvent& e) {
  if (e.kind->plural != "sandboxes") return;
  const ResourceKind* pods = FindKind("", "pods");
  const json::object* meta = ObjectField(e.object, "metadata");
  const std::string ns = StringAt(meta, "namespace");
  const std::string name = StringAt(meta, "name");
  if (!meta) return;
  std::string pod_name =
      StringAt(ObjectField(e.object.at("metadata"), "annotations"), kube::kPodNameAnnotation);
  if (pod_name.empty()) pod_name = name;

  if (e.type == "DELETED") {
    store().Delete(*pods, ns, pod_name, std::nullopt, std::nullopt);
    return;
  }
  const bool suspended = IsSuspended(e.object);
  const bool pod_exists = store().Get(*pods, ns, pod_name).ok();
  if (suspended && pod_exists) {
    store().Delete(*pods, ns, pod_name, std::nullopt, std::nullopt);
  } else if (!suspended && !pod_exists) {
    store().Create(*pods, ns, WorkloadPod(ns, pod_name, e.object));
  }
  // Status, written only when it differs (so this hook converges).
  const json::value* g = meta->if_contains("generation");
  const int64_t generation = g && g->is_int64() ? g->get_int64() : 0;
  const std::string now = FormatRfc3339(clock_.Now()).substr(0, 19) + "Z";
  json::array conditions = SandboxConditions(suspended, generation, now);
  store().Mutate(
      *e.kind, ns, name,
      [&](json::value& obj) -> std::optional<ApiFailure> {
        json::value& status = obj.get_object()["status"];
        if (!status.is_object()) status = json::object{};
        KeepTransitionTimes(status.get_object(), conditions);
        status.get_object()["conditions"] = conditions;
        return std::nullopt;
      },
      /*status_only=*/true);
}

void Simulator::DropWatches() {
  watch_epoch_.fetch_add(1);
  std::vector<std::function<void()>> wakers;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, h] : streams_) wakers.push_back(h.wake);
  }
  for (auto& w : wakers) w();
}

void Simulator::InjectWatchLine(const std::string& line) {
  std::vector<std::function<void(std::string)>> pushers;
  {
    std::lock_guard lock(mu_);
    for (auto& [id, h] : streams_) pushers.push_back(h.push_raw);
  }
  for (auto& p : pushers) p(line + "\n");
}

uint64_t Simulator::AddWatchStream(std::function<void()> wake,
                                   std::function<void(std::string)> push_raw) {
  std::lock_guard lock(mu_);
  streams_[next_waker_] = {std::move(wake), std::move(push_raw)};
  return next_waker_++;
}

void Simulator::RemoveWatchStream(uint64_t id) {
  std::lock_guard lock(mu_);
  streams_.erase(id);
}

bool Simulator::Serves(const ResourceKind& kind, const std::string& version) const {
  if (kind.plural == "sandboxes" && version == "v1beta1" && !options_.serve_sandbox_v1beta1)
    return false;
  return kind.Serves(version);
}

void Simulator::ClearFaults() {
  std::lock_guard lock(mu_);
  faults_.clear();
}

void Simulator::AddFault(FaultRule rule) {
  std::lock_guard lock(mu_);
  faults_.push_back(std::move(rule));
}

std::optional<FaultRule> Simulator::TakeFault(const std::string& verb,
                                              const std::string& resource) {
  std::lock_guard lock(mu_);
  for (auto it = faults_.begin(); it != faults_.end(); ++it) {
    if ((it->verb != "*" && it->verb != verb) || (it->resource != "*" && it->resource != resource))
      continue;
    FaultRule r = *it;
    if (it->count > 0 && --it->count == 0) faults_.erase(it);
    return r;
  }
  return std::nullopt;
}

void Simulator::CountRequest(const std::string& verb, const std::string& resource,
                             const std::string& name) {
  std::lock_guard lock(mu_);
  requests_.push_back({verb, resource, name});
}

int Simulator::RequestCount(const std::string& verb, const std::string& resource,
                            const std::string& name) const {
  std::lock_guard lock(mu_);
  int n = 0;
  for (const auto& r : requests_) {
    if ((verb == "*" || r.verb == verb) && (resource == "*" || r.resource == resource) &&
        (name == "*" || r.name == name)) {
      ++n;
    }
  }
  return n;
}

void Simulator::ServeStaleListOnce(const ResourceKind& kind, ListOutcome stale) {
  std::lock_guard lock(mu_);
  held_->stale_lists[&kind] = std::move(stale);
}

std::optional<ListOutcome> Simulator::TakeStaleList(const ResourceKind& kind) {
  std::lock_guard lock(mu_);
  auto it = held_->stale_lists.find(&kind);
  if (it == held_->stale_lists.end()) return std::nullopt;
  ListOutcome out = std::move(it->second);
  held_->stale_lists.erase(it);
  return out;
}

void Simulator::ResetCounts() {
  std::lock_guard lock(mu_);
  requests_.clear();
}

// agent-sandbox's conversion (v1beta1 is the hub): replicas 0 <-> Suspended.
json::value Simulator::ToVersion(const ResourceKind& kind, json::value stored,
                                 const std::string& version) {
  if (IsCoreEventView(kind)) return CoreEventFromStored(std::move(stored));
  if (!stored.is_object() || version == kind.versions[0]) return stored;
  auto& o = stored.get_object();
  o["apiVersion"] = kind.ApiVersion(version);
  if (kind.plural == "sandboxes" && version == "v1alpha1") {
    json::value& spec = o["spec"];
    if (!spec.is_object()) spec = json::object{};
    const bool suspended = IsSuspended(stored);
    spec.get_object().erase("operatingMode");
    spec.get_object()["replicas"] = suspended ? 0 : 1;
    if (json::value* status = o.if_contains("status"); status && status->is_object()) {
      status->get_object().erase("nodeName");
    }
  }
  return stored;
}

json::value Simulator::FromVersion(const ResourceKind& kind, json::value object,
                                   const std::string& version) {
  if (IsCoreEventView(kind)) return StoredEventFromCore(std::move(object));
  if (!object.is_object() || version == kind.versions[0]) return object;
  auto& o = object.get_object();
  o["apiVersion"] = kind.ApiVersion(kind.versions[0]);
  if (kind.plural == "sandboxes" && version == "v1alpha1") {
    json::value& spec = o["spec"];
    if (!spec.is_object()) spec = json::object{};
    const json::value* r = spec.get_object().if_contains("replicas");
    const bool suspended = r && r->is_int64() && r->get_int64() <= 0;
    spec.get_object().erase("replicas");
    spec.get_object()["operatingMode"] = suspended ? "Suspended" : "Running";
  }
  return object;
}

}  // namespace fk::sim
