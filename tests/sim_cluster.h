// The simulated cluster and its actors (tests/simulation_test.cc drives them):
// the in-process API server, every write of the kinds fencekeeper caches
// logged in resourceVersion order, and the actors that write — OpenShell's
// create and resume flows acted out one API call per step, the agent-sandbox
// controller, users (resuming with a stale fence, deleting and re-creating a
// sandbox under its name), fence changes — plus decide() over the server's own
// objects (what the cluster itself says a sandbox must be).
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

  json::value NewPod(const std::string& name, const char* role, bool gated) {
    json::object pod = sim::BoundaryPod(kNs, name, role).as_object();
    if (gated) pod["spec"].as_object()["schedulingGates"] = sim::AdmissionGates();
    return Api("POST", kPods, json::serialize(pod));
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
    std::string pod_uid = "none";
    if (running) pod_uid = kube::MetadataString(NewPod(name, "workload", false), "uid");
    const auto [fence_uid, fence_gen] = fence ? *fence : WorkloadFence();
    json::object sb = SandboxObject(name, running ? "Running" : "Suspended");
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
          {"podTemplate", {{"spec", {{"schedulingGates", sim::AdmissionGates()}}}}}}}};
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
    return s;
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
      NewPod(name, "workload", true);
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
    Note(std::string("user: delete ") + name + (recreate ? " and create it again" : ""));
    flows_.erase(
        std::remove_if(flows_.begin(), flows_.end(), [&](const Flow& f) { return f.name == name; }),
        flows_.end());
    Api("DELETE", std::string(kSandboxes) + "/" + name);
    Api("DELETE", std::string(kPods) + "/" + name);
    Api("DELETE", std::string(kPods) + "/os-supervisor-" + name);
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
  int step_ = 0;
  std::vector<Flow> flows_;
  std::deque<std::string> trace_;
  uint64_t digest_ = 14695981039346656037ull;
  std::string violation_;
};

}  // namespace fk::simulation
