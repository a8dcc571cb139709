// The simulated cluster and its actors (tests/simulation_test.cc drives them):
// the in-process API server, every write of the kinds fencekeeper caches
// logged in resourceVersion order, and the actors that write — OpenShell's
// create and resume flows acted out one API call per step, the agent-sandbox
// controller, users (resuming with a stale fence, deleting and re-creating a
// sandbox under its name), fence changes, other NetworkPolicies of the
// namespace, the supervisor policy deleted, re-created and altered, and
// OpenShell's warm pool (spares created, claimed and retired) — plus decide()
// over the server's own objects (what the cluster itself says a sandbox must
// be), the effective fence read by tests/sim_fence.h.
#pragma once

#include <algorithm>
#include <boost/json.hpp>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "domain/decision.h"
#include "kube/json_fields.h"
#include "kube/objects.h"
#include "reconciler/cluster_cache.h"
#include "sim/handler.h"
#include "sim/openshell_flow.h"
#include "sim/resources.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/store.h"
#include "sim_fence.h"
#include "test_support.h"

namespace fk::simulation {
namespace json = boost::json;
using namespace std::chrono_literals;
using reconciler::CacheKind;

constexpr const char* kNs = "agents";
constexpr const char* kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/agents/sandboxes";
constexpr const char* kPods = "/api/v1/namespaces/agents/pods";
constexpr const char* kPolicies = "/apis/networking.k8s.io/v1/namespaces/agents/networkpolicies";
constexpr auto kLeaseDuration = 15s;
constexpr auto kRenewDeadline = 10s;

inline std::string Annotation(const json::value& obj, const std::string& key) {
  return kube::StringField(kube::ObjectField(kube::ObjectField(obj, "metadata"), "annotations"),
                           key)
      .value_or("");
}
inline std::optional<CacheKind> KindOf(const sim::ResourceKind* k) {
  if (k->plural == "sandboxes") return CacheKind::kSandboxes;
  if (k->plural == "networkpolicies") return CacheKind::kPolicies;
  if (k->plural == "pods") return CacheKind::kPods;
  return std::nullopt;
}

// One OpenShell lifecycle flow in progress, acted out one API call per step
// by the simulator's own implementation (sim/openshell_flow.h).
using Flow = sim::OpenShellFlow;

// FK_SIM_WITHOUT=a,b: fault families and invariants switched off.
inline bool Without(const std::string& family) {
  const char* v = std::getenv("FK_SIM_WITHOUT");
  if (!v) return false;
  const std::string list = std::string(",") + v + ",";
  return list.find("," + family + ",") != std::string::npos;
}

class Cluster {
 public:
  explicit Cluster(uint64_t seed, size_t history_limit) : rng_(seed) {
    sim::SimOptions so;
    so.emulate_agent_sandbox = false;  // the agent-sandbox controller is an actor below
    so.history_limit = history_limit;
    so.uid_seed = static_cast<uint32_t>(seed * 2654435761u) | 1;  // replayable UIDs
    sim_ = std::make_unique<sim::Simulator>(so, time_);
    sim_->store().AddHook([this](const sim::StoredEvent& e) {
      auto kind = KindOf(e.kind);
      if (!kind) return;
      const char* version = *kind == CacheKind::kSandboxes ? "v1beta1" : "v1";
      log_.push_back({*kind, e.type == "DELETED",
                      std::make_shared<const json::value>(
                          sim::Simulator::ToVersion(*e.kind, e.object, version))});
      const std::string name = kube::MetadataString(e.object, "name");
      if (*kind == CacheKind::kSandboxes && e.type == "ADDED" &&
          std::find(names_.begin(), names_.end(), name) == names_.end())
        names_.push_back(name);
    });
  }
  std::string Trace() const {
    std::string out;
    for (const auto& line : trace_) out += "    " + line + "\n";
    return out;
  }
  // Every note of the run folded into one number (FNV-1a): two runs of one
  // seed that took the same steps in the same order have the same digest.
  uint64_t Digest() const { return digest_; }

 protected:
  // ---- the cluster, through the simulator's own request handling ------------

  json::value Api(const std::string& method, const std::string& target,
                  const std::string& body = "", const std::string& type = "application/json",
                  int* status = nullptr) {
    sim::ApiReply r = sim::HandleRequest(*sim_, {method, target, body, type}, "sim");
    if (status) *status = r.status;
    return ParseLenient(r.body);
  }
  // A reply's JSON, invalid UTF-8 included (the InvalidUtf8 actor puts some
  // in).
  static json::value ParseLenient(const std::string& body) {
    json::parse_options opts;
    opts.allow_invalid_utf8 = true;
    boost::system::error_code ec;
    json::value v = json::parse(body, ec, {}, opts);
    return ec ? json::value() : v;
  }
  json::value Patch(const std::string& target, const json::value& patch) {
    return Api("PATCH", target, json::serialize(patch), "application/merge-patch+json");
  }
  std::optional<json::value> Server(const std::string& collection, const std::string& name) {
    int status = 0;
    json::value v = Api("GET", collection + std::string("/") + name, "", "", &status);
    if (status != 200) return std::nullopt;
    return v;
  }
  // Every name a sandbox was ever created under; some may be gone now.
  const std::vector<std::string>& SandboxNames() const { return names_; }

  void Setup() {
    Api("POST", kPolicies, json::serialize(sim::IntendedWorkloadPolicy(kNs, 5500)));
    Api("POST", kPolicies, json::serialize(sim::IntendedSupervisorPolicy(kNs)));
    const int n = 2 + static_cast<int>(rng_() % 4);
    for (int i = 0; i < n; ++i) CreateAdmitted("sb-" + std::to_string(i), rng_() % 4 != 0);
  }

  // A boundary pod; a workload's carries its template's labels too (`labels`),
  // as the agent-sandbox controller makes it from the template.
  json::value NewPod(const std::string& name, const char* role, bool gated,
                     const json::object& labels = {}) {
    json::object pod = sim::BoundaryPod(kNs, name, role).as_object();
    if (gated) pod["spec"].as_object()["schedulingGates"] = sim::AdmissionGates();
    auto& pod_labels = pod["metadata"].as_object()["labels"].as_object();
    for (const auto& [k, v] : labels)
      if (!pod_labels.contains(k)) pod_labels[k] = v;
    return Api("POST", kPods, json::serialize(pod));
  }
  // The labels a sandbox's template gives its workload pod.
  static json::object TemplateLabels(const json::value& sandbox) {
    const json::value* labels = oracle::Get(
        oracle::Get(oracle::Get(oracle::Get(&sandbox, "spec"), "podTemplate"), "metadata"),
        "labels");
    return labels && labels->is_object() ? labels->as_object() : json::object{};
  }

  std::pair<std::string, int64_t> WorkloadFence() {
    auto p = Server(kPolicies, domain::kWorkloadPolicyName);
    if (!p) return {"", 0};
    return {kube::MetadataString(*p, "uid"), p->at("metadata").at("generation").as_int64()};
  }

  // A sandbox OpenShell admitted before the run, under the current fence.
  void CreateAdmitted(const std::string& name, bool running,
                      std::optional<std::pair<std::string, int64_t>> fence = std::nullopt) {
    const std::string sup_uid =
        kube::MetadataString(NewPod("os-supervisor-" + name, "supervisor", false), "uid");
    json::object sb = SandboxObject(name, running ? "Running" : "Suspended");
    std::string pod_uid = "none";
    if (running)
      pod_uid = kube::MetadataString(NewPod(name, "workload", false, TemplateLabels(sb)), "uid");
    const auto [fence_uid, fence_gen] = fence ? *fence : WorkloadFence();
    auto& ann = sb["metadata"].as_object()["annotations"].as_object();
    ann[kube::kFenceUidAnnotation] = fence_uid;
    ann[kube::kFenceGenerationAnnotation] = std::to_string(fence_gen);
    ann[kube::kWorkloadUidAnnotation] = pod_uid;
    ann[kube::kSupervisorUidAnnotation] = sup_uid;
    Api("POST", kSandboxes, json::serialize(sb));
  }

  json::object SandboxObject(const std::string& name, const char* mode) {
    return json::object{
        {"apiVersion", "agents.x-k8s.io/v1beta1"},
        {"kind", "Sandbox"},
        {"metadata",
         {{"name", name},
          {"namespace", kNs},
          {"labels", {{"openshell.ai/managed-by", "openshell"}, {kube::kSandboxIdLabel, name}}},
          {"annotations", json::object{}}}},
        {"spec",
         {{"operatingMode", mode},
          {"podTemplate",
           {{"metadata", {{"labels", {{"tier", rng_() % 3 ? "agent" : "batch"}}}}},
            {"spec", {{"schedulingGates", sim::AdmissionGates()}}}}}}}};
  }

  // docs/design.md#decision-table, row 1a, read straight off the server's
  // objects.
  bool InAdmittingWindow(const json::value& sandbox) {
    auto ann = [&](const char* key) { return Annotation(sandbox, key); };
    const std::string op = ann(kube::kBootstrapOperationAnnotation);
    const std::string started = ann(kube::kBootstrapStartedAtAnnotation);
    if (ann(kube::kBootstrappingAnnotation) != "true" || (op != "create" && op != "restart") ||
        ann(kube::kBootstrapPhaseAnnotation) != "preparing" || started.empty() ||
        started.find_first_not_of("0123456789") != std::string::npos || started.size() > 15) {
      return false;
    }
    if (std::llabs(time_.NowMs() - std::stoll(started)) >= domain::kBootstrapGraceMs) return false;
    std::string pod_name = ann(kube::kPodNameAnnotation);
    if (pod_name.empty()) pod_name = kube::MetadataString(sandbox, "name");
    auto pod = Server(kPods, pod_name);
    if (!pod) return true;
    const json::value* gates = kube::ObjectField(*pod, "spec")
                                   ? kube::ObjectField(*pod, "spec")->if_contains("schedulingGates")
                                   : nullptr;
    return gates && gates->is_array() && !gates->as_array().empty();
  }

  // decide() over the server's own objects, as of now, with no history.
  domain::Snapshot Truth(const json::value& sandbox) {
    auto parsed = kube::ParseSandbox(sandbox, domain::ApiVersion::kV1beta1);
    domain::Snapshot s;
    if (!parsed.ok()) return s;
    s.sandbox = parsed->observation;
    s.observed_at_ms = time_.NowMs();
    auto policy = Server(kPolicies, domain::kWorkloadPolicyName);
    auto sup_policy = Server(kPolicies, domain::kSupervisorPolicyName);
    s.workload_fence =
        *kube::ParsePolicy(policy ? &*policy : nullptr, kube::PolicyRole::kWorkload, 5500);
    s.supervisor_fence = *kube::ParsePolicy(sup_policy ? &*sup_policy : nullptr,
                                            kube::PolicyRole::kSupervisor, 5500);
    auto pod = Server(kPods, parsed->workload_pod_name);
    auto sup = Server(kPods, parsed->supervisor_pod_name);
    s.workload_pod = *kube::ParsePod(pod ? &*pod : nullptr);
    s.supervisor_pod = *kube::ParsePod(sup ? &*sup : nullptr);
    // The effective fence, read apart from fencekeeper's own code: the
    // workload's pod labels, or its template's while it has none.
    const oracle::Labels labels = pod ? oracle::PodLabels(*pod) : oracle::TemplateLabels(sandbox);
    for (const oracle::Bypass& b : oracle::Bypasses(Api("GET", kPolicies), labels, 5500)) {
      const auto widens = b.widens.egress && b.widens.ingress ? domain::Widens::kBoth
                          : b.widens.egress                   ? domain::Widens::kEgress
                                                              : domain::Widens::kIngress;
      s.bypass.push_back({b.name, b.uid, b.generation, widens});
    }
    return s;
  }
  // Whether the workload fence of `truth` holds on its own: present, intact,
  // and the one the sandbox was admitted under.
  static bool WorkloadFenceHolds(const domain::Snapshot& truth) {
    const auto& f = truth.workload_fence;
    return f.present && f.intact && truth.sandbox.fence_uid == f.uid &&
           truth.sandbox.fence_generation == f.generation;
  }

  // ---- the actors
  // ------------------------------------------------------------

  // The agent-sandbox controller for one sandbox: a suspended one loses its
  // workload pod; a running one gets a new pod (gated as its template says).
  void AgentSandbox(const std::string& name) {
    auto sb = Server(kSandboxes, name);
    if (!sb) return;
    const bool running =
        kube::StringField(kube::ObjectField(*sb, "spec"), "operatingMode").value_or("") !=
        "Suspended";
    const bool has_pod = Server(kPods, name).has_value();
    if (!running && has_pod) {
      Note("agent-sandbox: delete pod " + name);
      Api("DELETE", std::string(kPods) + "/" + name);
    } else if (running && !has_pod) {
      Note("agent-sandbox: create gated pod " + name);
      NewPod(name, "workload", true, TemplateLabels(*sb));
    }
  }

  void StartCreate() {
    const std::string name = "new-" + std::to_string(++created_);
    Note("openshell: create " + name);
    json::object sb = SandboxObject(name, "Suspended");
    sb["metadata"].as_object()["annotations"] = sim::BootstrapAnnotations("create", time_.NowMs());
    Api("POST", kSandboxes, json::serialize(sb));
    flows_.push_back({Flow::Type::kCreate, kNs, name, 0, "", 0});
  }

  bool StartResume(bool stale_user) {
    std::vector<std::string> candidates;
    for (const auto& name : SandboxNames()) {
      auto sb = Server(kSandboxes, name);
      if (!sb) continue;
      const bool suspended =
          kube::StringField(kube::ObjectField(*sb, "spec"), "operatingMode").value_or("") ==
          "Suspended";
      const bool busy =
          std::any_of(flows_.begin(), flows_.end(), [&](const Flow& f) { return f.name == name; });
      if (suspended && !busy && Annotation(*sb, kube::kBootstrappingAnnotation) != "true")
        candidates.push_back(name);
    }
    if (candidates.empty()) return false;
    const std::string name = candidates[rng_() % candidates.size()];
    if (stale_user) {
      Note("user: resume " + name + " with its old fence annotations");
      Patch(std::string(kSandboxes) + "/" + name, {{"spec", {{"operatingMode", "Running"}}}});
      return true;
    }
    Note("openshell: resume " + name);
    flows_.push_back({Flow::Type::kResume, kNs, name, 0, "", 0});
    return true;
  }

  // One step of one flow (docs/design.md#openshells-create-and-resume-flows).
  void AdvanceFlow(Flow& f) {
    const std::string did = sim::AdvanceOpenShellFlow(*sim_, f);
    if (did.empty()) return;  // waiting for the workload pod
    Note("openshell: " + std::string(f.type == Flow::Type::kCreate ? "create " : "resume ") +
         f.name + ": " + did);
  }

  void ChangeFence() {
    const std::string path = std::string(kPolicies) + "/openshell-sandbox-workloads";
    json::value intended = sim::IntendedWorkloadPolicy(kNs, 5500);
    switch (rng_() % 3) {
      case 0: {
        Note("fence: altered");
        json::value spec = intended.at("spec");
        spec.as_object()["egress"] = json::array{json::object{}};
        Patch(path, {{"spec", spec}});
        break;
      }
      case 1:
        Note("fence: intended spec (re)applied");
        Patch(path, {{"spec", intended.at("spec")}});
        break;
      default:
        Note("fence: recreated");
        Api("DELETE", path);
        Api("POST", kPolicies, json::serialize(intended));
        break;
    }
  }

  // A user deletes a sandbox (and the agent-sandbox controller its pods) and,
  // unless `recreate` is false, creates it again under the same name: a new
  // uid, admitted under the current fence or carrying the deleted one's
  // (possibly stale) fence annotations.
  void Recreate(const std::string& name, bool recreate) {
    auto old = Server(kSandboxes, name);
    if (!old) return;
    // A warm-pool pair's supervisor pod is named by its pair id; deleted, a
    // pair is gone (OpenShell prepares new ones under new ids).
    const std::string pair = Annotation(*old, kube::kWarmPairIdKey);
    recreate = recreate && pair.empty();
    Note(std::string("user: delete ") + name + (recreate ? " and create it again" : ""));
    flows_.erase(
        std::remove_if(flows_.begin(), flows_.end(), [&](const Flow& f) { return f.name == name; }),
        flows_.end());
    Api("DELETE", std::string(kSandboxes) + "/" + name);
    Api("DELETE", std::string(kPods) + "/" + name);
    Api("DELETE",
        std::string(kPods) + "/" + kube::kSupervisorPodPrefix + (pair.empty() ? name : pair));
    if (!recreate) return;
    std::optional<std::pair<std::string, int64_t>> fence;
    if (rng_() % 2) {
      const std::string gen = Annotation(*old, kube::kFenceGenerationAnnotation);
      if (!gen.empty() && gen.find_first_not_of("0123456789") == std::string::npos &&
          gen.size() < 15)
        fence = {{Annotation(*old, kube::kFenceUidAnnotation), std::stoll(gen)}};
    }
    CreateAdmitted(name, rng_() % 4 != 0, fence);
  }

  // A field decide() reads gets invalid UTF-8 (written to the store directly:
  // the simulator's JSON parser, like the API server's, would refuse the
  // bytes in a request body; a real API server replaces them by U+FFFD, an
  // older or a foreign writer may not).
  void InvalidUtf8(const std::string& name) {
    if (!Server(kSandboxes, name)) return;
    const sim::ResourceKind* kind = sim::FindKind("agents.x-k8s.io", "sandboxes");
    const bool phase = rng_() % 2;
    const std::string key =
        phase ? kube::kBootstrapPhaseAnnotation : kube::kBootstrapOperationAnnotation;
    Note("user: invalid UTF-8 in " + name + "'s " + key);
    sim_->store().Mutate(
        *kind, kNs, name,
        [&](json::value& obj) -> std::optional<sim::ApiFailure> {
          auto& meta = obj.as_object()["metadata"].as_object();
          if (!meta["annotations"].is_object()) meta["annotations"] = json::object{};
          meta["annotations"].as_object()[key] =
              json::string(phase ? "prep\xff\xfeing" : "re\xc3start");
          return std::nullopt;
        },
        false);
  }

  // ---- the effective fence's actors (docs/design.md#the-effective-fence) ---

  // A PUT of the object at `path` with `spec`, as `kubectl replace` does.
  void Replace(const std::string& path, json::value spec) {
    int status = 0;
    json::value obj = Api("GET", path, "", "", &status);
    if (status != 200) return;
    obj.as_object()["spec"] = std::move(spec);
    Api("PUT", path, json::serialize(obj));
  }

  // A NetworkPolicy spec of a shape the effective fence must tell apart:
  // which pods `selector` selects, what `rules` allow (kSelectorShapes and
  // kRuleShapes name them).
  static json::object PolicySpec(int selector, int rules) {
    auto expression = [](const char* key, const char* op, json::array values) {
      json::object e{{"key", key}, {"operator", op}};
      if (!values.empty()) e["values"] = std::move(values);
      return json::object{{"matchExpressions", json::array{e}}};
    };
    json::object pods;
    switch (selector) {
      case 0:
        pods = {{"matchLabels", {{kube::kBoundaryRoleLabel, "workload"}}}};
        break;
      case 1:
        break;  // every pod of the namespace
      case 2:
        pods = {{"matchLabels", {{"app", "database"}}}};  // no workload has it
        break;
      case 3:
        pods = expression("tier", "In", {"agent"});
        break;
      case 4:
        pods = expression("tier", "NotIn", {"agent"});
        break;
      case 5:
        pods = expression("tier", "Exists", {});
        break;
      case 6:
        pods = expression(kube::kBoundaryRoleLabel, "In", {"supervisor"});
        break;
      default:
        pods = expression("tier", "DoesNotExist", {});
        break;
    }
    const json::value fences_own =
        sim::IntendedWorkloadPolicy(kNs, 5500).at("spec").at("ingress").at(0);
    const json::object elsewhere{{"from", json::array{{{"namespaceSelector", json::object{}}}}}};
    json::object spec{{"podSelector", std::move(pods)}};
    switch (rules) {
      case 0:  // widens egress
        spec["policyTypes"] = json::array{"Egress"};
        spec["egress"] =
            json::array{{{"to", json::array{{{"ipBlock", {{"cidr", "10.0.0.0/8"}}}}}}}};
        break;
      case 1:  // widens ingress
        spec["policyTypes"] = json::array{"Ingress"};
        spec["ingress"] = json::array{elsewhere};
        break;
      case 2:  // no policyTypes, an egress section: defaulted to both; widens egress
        spec["egress"] = json::array{{{"ports", json::array{{{"protocol", "UDP"}, {"port", 53}}}}}};
        break;
      case 3:  // denies all egress: widens nothing
        spec["policyTypes"] = json::array{"Egress"};
        break;
      case 4:  // the fence's own ingress rule again: widens nothing
        spec["policyTypes"] = json::array{"Ingress"};
        spec["ingress"] = json::array{fences_own};
        break;
      case 5:  // an egress rule, but isolating ingress only: widens nothing
        spec["policyTypes"] = json::array{"Ingress"};
        spec["egress"] = json::array{json::object{}};
        break;
      case 6:  // all ingress: widens ingress
        spec["policyTypes"] = json::array{"Ingress", "Egress"};
        spec["ingress"] = json::array{json::object{}};
        spec["egress"] = json::array{};
        break;
      default:  // no policyTypes, the fence's own rule and one from elsewhere: widens ingress
        spec["ingress"] = json::array{fences_own, elsewhere};
        break;
    }
    return spec;
  }
  static constexpr const char* kSelectorShapes[] = {
      "boundary-role=workload", "empty selector", "app=database",         "tier in (agent)",
      "tier notin (agent)",     "tier exists",    "role in (supervisor)", "!tier"};
  static constexpr const char* kRuleShapes[] = {"egress rule",
                                                "ingress from elsewhere",
                                                "egress, no policyTypes",
                                                "deny all egress",
                                                "the fence's own ingress",
                                                "egress, isolating ingress only",
                                                "all ingress",
                                                "own and foreign ingress, no policyTypes"};

  // Another NetworkPolicy of the namespace is created, edited or deleted
  // (or a workload pod relabelled, which changes what selects it).
  void OtherPolicy() {
    if (rng_() % 5 == 0) return RelabelWorkload();
    const std::string name = "extra-" + std::to_string(rng_() % 4);
    const std::string path = std::string(kPolicies) + "/" + name;
    const int selector = static_cast<int>(rng_() % 8), rules = static_cast<int>(rng_() % 8);
    const std::string shape =
        std::string(" (") + kSelectorShapes[selector] + ", " + kRuleShapes[rules] + ")";
    if (!Server(kPolicies, name)) {
      Note("user: create NetworkPolicy " + name + shape);
      const json::object policy{{"apiVersion", "networking.k8s.io/v1"},
                                {"kind", "NetworkPolicy"},
                                {"metadata", {{"name", name}, {"namespace", kNs}}},
                                {"spec", PolicySpec(selector, rules)}};
      Api("POST", kPolicies, json::serialize(policy));
    } else if (rng_() % 3 == 0) {
      Note("user: delete NetworkPolicy " + name);
      Api("DELETE", path);
    } else {
      Note("user: replace NetworkPolicy " + name + shape);
      Replace(path, PolicySpec(selector, rules));
    }
  }

  // A user relabels a workload pod: what selects it changes.
  void RelabelWorkload() {
    if (names_.empty()) return;
    const std::string name = names_[rng_() % names_.size()];
    const char* tier[] = {"agent", "batch", nullptr};
    const char* to = tier[rng_() % 3];
    if (!Server(kPods, name)) return;
    Note("user: relabel pod " + name + (to ? std::string(" tier=") + to : " without tier"));
    Patch(std::string(kPods) + "/" + name,
          {{"metadata", {{"labels", {{"tier", to ? json::value(to) : json::value(nullptr)}}}}}});
  }

  // The supervisor policy deleted (OpenShell re-creates it when missing),
  // re-created with a new uid, altered (to select workloads: then it widens
  // their egress, which only the effective fence catches), or restored.
  void SupervisorPolicy() {
    const std::string path = std::string(kPolicies) + "/" + domain::kSupervisorPolicyName;
    const json::value intended = sim::IntendedSupervisorPolicy(kNs);
    if (!Server(kPolicies, domain::kSupervisorPolicyName)) {
      Note("openshell: re-creates the missing supervisor policy");
      Api("POST", kPolicies, json::serialize(intended));
      return;
    }
    json::value spec = intended.at("spec");
    switch (rng_() % 5) {
      case 0:
        Note("supervisor policy: deleted");
        Api("DELETE", path);
        break;
      case 1:
        Note("supervisor policy: deleted and re-created (a new uid)");
        Api("DELETE", path);
        Api("POST", kPolicies, json::serialize(intended));
        break;
      case 2: {
        const bool every_pod = rng_() % 2;
        Note(std::string("supervisor policy: altered to select ") +
             (every_pod ? "every pod" : "workloads") + " (widens their egress)");
        spec.as_object()["podSelector"] =
            every_pod ? json::object{}
                      : json::object{{"matchLabels", {{kube::kBoundaryRoleLabel, "workload"}}}};
        Replace(path, std::move(spec));
        break;
      }
      case 3:
        Note("supervisor policy: altered, still for supervisors only (egress denied)");
        spec.as_object()["egress"] = json::array{};
        Replace(path, std::move(spec));
        break;
      default:
        Note("supervisor policy: intended spec (re)applied");
        Replace(path, std::move(spec));
        break;
    }
  }

  // ---- OpenShell's warm pool (reference B) -------------------------------

  std::string NewPairId() {
    char hex[25];
    std::snprintf(hex, sizeof hex, "%016llx%08llx", static_cast<unsigned long long>(rng_()),
                  static_cast<unsigned long long>(rng_() & 0xffffffffu));
    return hex;
  }

  // The spares the cluster has now, by name.
  std::vector<std::string> Spares() {
    std::vector<std::string> out;
    for (const auto& name : names_) {
      if (name.rfind("warm-", 0) != 0) continue;
      auto sb = Server(kSandboxes, name);
      if (sb && oracle::IsSpare(*sb)) out.push_back(name);
    }
    return out;
  }

  void WarmPool() {
    switch (rng_() % 4) {
      case 0:
        return CreateSpare();
      case 1:
        return ClaimSpare();
      case 2:
        return FinishClaim();
      default:
        return RetireSpare();
    }
  }

  // The pool prepares a spare (reference B.1): its pods `warm-<pair>` and
  // `os-supervisor-<pair>` running, the CR labelled openshell.ai/warm-pool
  // without a sandbox id, idle as a released create bootstrap under the
  // current fence.
  void CreateSpare() {
    if (Spares().size() >= 3) return;
    const std::string pair = NewPairId(), name = "warm-" + pair;
    Note("openshell: the warm pool prepares spare " + name);
    json::object sb = SandboxObject(name, "Running");
    auto& meta = sb["metadata"].as_object();
    meta["labels"] = {{"openshell.ai/managed-by", "openshell"},
                      {kube::kWarmPoolLabel, "default"},
                      {"openshell.ai/warm-pool-state", "ready"},
                      {"openshell.ai/template-id", "default"}};
    NewPod(name, "workload", false, TemplateLabels(sb));
    NewPod(kube::kSupervisorPodPrefix + pair, "supervisor", false);
    json::object annotations = sim::BootstrapAnnotations("create", time_.NowMs());
    annotations[kube::kBootstrapPhaseAnnotation] = "released";
    annotations[kube::kWarmPairIdKey] = pair;
    const auto [fence_uid, fence_gen] = WorkloadFence();
    annotations[kube::kFenceUidAnnotation] = fence_uid;
    annotations[kube::kFenceGenerationAnnotation] = std::to_string(fence_gen);
    meta["annotations"] = std::move(annotations);
    Api("POST", kSandboxes, json::serialize(sb));
  }

  // A spare is claimed (reference B.2): one merge patch under its
  // resourceVersion removes the pool labels and gives it a logical sandbox
  // id; the pair id stays, and so do the fence annotations. OpenShell
  // finishes the bootstrap later (FinishClaim).
  void ClaimSpare() {
    const auto spares = Spares();
    if (spares.empty()) return;
    const std::string name = spares[rng_() % spares.size()];
    auto sb = Server(kSandboxes, name);
    if (!sb) return;
    const std::string logical = "claimed-" + std::to_string(++claimed_);
    Note("openshell: claims " + name + " as " + logical);
    Patch(std::string(kSandboxes) + "/" + name,
          {{"metadata",
            {{"resourceVersion", kube::MetadataString(*sb, "resourceVersion")},
             {"labels",
              {{kube::kWarmPoolLabel, nullptr},
               {"openshell.ai/warm-pool-state", nullptr},
               {kube::kSandboxIdLabel, logical},
               {"openshell.ai/sandbox-name", logical}}},
             {"annotations",
              {{kube::kSandboxIdLabel, logical},
               {"openshell.ai/sandbox-name", logical},
               {kube::kBootstrapStartedAtAnnotation, std::to_string(time_.NowMs())}}}}}});
    claims_.push_back({name, kube::MetadataString(*sb, "uid")});
  }

  // OpenShell finishes a claimed pair's bootstrap: no longer bootstrapping,
  // admitted with the pair's pods.
  void FinishClaim() {
    if (claims_.empty()) return;
    const auto [name, uid] = claims_.front();
    claims_.erase(claims_.begin());
    auto sb = Server(kSandboxes, name);
    if (!sb || kube::MetadataString(*sb, "uid") != uid) return;
    auto pod_uid = [&](const std::string& pod) -> json::value {
      auto p = Server(kPods, pod);
      return p ? json::value(kube::MetadataString(*p, "uid")) : json::value(nullptr);
    };
    Note("openshell: " + name + " claimed, bootstrap complete");
    const std::string pair = Annotation(*sb, kube::kWarmPairIdKey);
    Patch(std::string(kSandboxes) + "/" + name,
          {{"metadata",
            {{"annotations",
              {{kube::kBootstrappingAnnotation, nullptr},
               {kube::kBootstrapOperationAnnotation, nullptr},
               {kube::kBootstrapPhaseAnnotation, nullptr},
               {kube::kBootstrapStartedAtAnnotation, nullptr},
               {kube::kWorkloadUidAnnotation, pod_uid(name)},
               {kube::kSupervisorUidAnnotation, pod_uid(kube::kSupervisorPodPrefix + pair)}}}}}});
  }

  // The pool retires a spare (reference B.5): state retiring, then deleted
  // with its pods.
  void RetireSpare() {
    const auto spares = Spares();
    if (spares.empty()) return;
    const std::string name = spares[rng_() % spares.size()];
    auto sb = Server(kSandboxes, name);
    if (!sb) return;
    Note("openshell: the warm pool retires " + name);
    const std::string path = std::string(kSandboxes) + "/" + name;
    Patch(path, {{"metadata", {{"labels", {{"openshell.ai/warm-pool-state", "retiring"}}}}}});
    Api("DELETE", path);
    Api("DELETE", std::string(kPods) + "/" + name);
    Api("DELETE", std::string(kPods) + "/" + kube::kSupervisorPodPrefix +
                      Annotation(*sb, kube::kWarmPairIdKey));
  }

  // How many trace lines a failing seed prints (FK_SIM_TRACE=N; 60 by default).
  static size_t TraceLines() {
    static const size_t n = [] {
      const char* v = std::getenv("FK_SIM_TRACE");
      return v && *v ? std::strtoull(v, nullptr, 10) : 60;
    }();
    return n;
  }
  void Note(const std::string& line) {
    trace_.push_back("[" + std::to_string(step_) + "] " + line);
    for (unsigned char c : trace_.back()) digest_ = (digest_ ^ c) * 1099511628211ull;
    if (trace_.size() > TraceLines()) trace_.pop_front();
  }
  void Fail(const std::string& what) {
    if (Without(what.substr(0, what.find(':')))) return;  // an invariant switched off
    if (violation_.empty()) violation_ = "step " + std::to_string(step_) + ": " + what;
  }

  std::mt19937_64 rng_;
  ManualTimeSource time_;
  std::unique_ptr<sim::Simulator> sim_;
  // Every write of the kinds fencekeeper caches, in resourceVersion order.
  struct LoggedEvent {
    CacheKind kind;
    bool deleted;
    kube::ObjectPtr object;  // in the version fencekeeper reads
  };
  std::vector<LoggedEvent> log_;
  std::vector<std::string> names_;  // every sandbox name ever created (some may be gone now)
  int created_ = 0;
  int claimed_ = 0;  // warm-pool pairs claimed
  // Claimed pairs whose bootstrap OpenShell has yet to finish: name and uid.
  std::vector<std::pair<std::string, std::string>> claims_;
  int step_ = 0;
  std::vector<Flow> flows_;
  std::deque<std::string> trace_;
  uint64_t digest_ = 14695981039346656037ull;
  std::string violation_;
};

}  // namespace fk::simulation
