// The deterministic simulation: the real controller, SandboxReconciler,
// journal (a real SQLite file), decide() and LeaderElector, over a fake
// transport into an in-process simulated API server and a manual clock,
// driven by a seeded scheduler. Each seed interleaves, in its own order:
// watch events delivered late, out of order across kinds, or dropped (then a
// relist); PATCH responses lost after the write applied; real 409s from a
// concurrent writer; 5xx, 429 and resets; Event endpoint failures; journal
// write refusals; process crashes at any step (all memory dropped, journal
// reopened); lease renewals that stall; OpenShell's create and resume flows
// acted out step by step (gated pods, late annotations); users resuming
// sandboxes with a stale fence; fence changes and recreations. Three seeds
// in four run the controller with 2 to 4 workers (1 + seed % 4) on
// SteppedWorkers: real threads, one running at a time, each parked at every
// request, so passes over different sandboxes interleave at every request
// boundary in a seeded order; a request parked past its deadline is
// abandoned unsent, as the real transport abandons it.
//
// Invariants, checked at every PATCH and at the end of every run:
//   I1  no PATCH without a durable intent carrying the same seq and precondition;
//   I2  once faults stop, every journal outcome agrees with the server
//       (fail-closed-journal-seq annotation present <=> applied), none pending;
//   I3  a sandbox suspended by fencekeeper is never PATCHed again in the
//       same episode (until its spec changes);
//   I4  once faults stop, every sandbox that must fail closed is suspended
//       within a bounded number of steps;
//   I5  no sandbox in the admitting window is PATCHed;
//   I6  no write is sent by an instance whose lease has lapsed;
//   I7  a PATCH that applies suspends a sandbox the cluster's own state says
//       must fail closed (a lagging cache never suspends a healthy sandbox).
//
// A failing seed prints itself and its last steps; FK_SIM_SEED=N replays it
// exactly; FK_SIM_SEEDS=N runs N seeds (CI runs a fixed budget).
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "domain/decision.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/fake_transport.h"
#include "kube/json_fields.h"
#include "kube/objects.h"
#include "map_cache.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/controller.h"
#include "reconciler/event_recorder.h"
#include "reconciler/leader.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "stepped_workers.h"
#include "test_support.h"

namespace fk::simulation {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using reconciler::CacheKind;

constexpr const char* kNs = "agents";
constexpr const char* kSeqAnnotation = "openshell.ai/fail-closed-journal-seq";
constexpr const char* kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/agents/sandboxes";
constexpr const char* kPods = "/api/v1/namespaces/agents/pods";
constexpr const char* kPolicies = "/apis/networking.k8s.io/v1/namespaces/agents/networkpolicies";
constexpr int64_t kGraceMs = 5 * 60 * 1000;
constexpr auto kLeaseDuration = 15s;
constexpr auto kRenewDeadline = 10s;

std::string Annotation(const json::value& obj, const std::string& key) {
  return kube::StringField(kube::ObjectField(kube::ObjectField(obj, "metadata"), "annotations"),
                           key)
      .value_or("");
}

// The controller's view of the cluster: a cache the scheduler feeds from the
// server's event log, one kind at a time, late, and sometimes wholesale (a
// relist after a dropped watch).
struct SimCache : fk::testing::MapCache {
  size_t cursor[3] = {0, 0, 0};  // next index into the world's event log, per kind
};

// What the fencekeeper instance alive now is made of; a crash drops it whole.
struct Instance {
  std::string identity;
  std::unique_ptr<journal::Journal> journal;
  kube::FakeTransport* transport = nullptr;  // owned by client
  std::unique_ptr<kube::ApiClient> client;
  std::unique_ptr<reconciler::LeaderElector> elector;
  std::unique_ptr<reconciler::EventRecorder> events;
  std::unique_ptr<SimCache> cache;
  std::unique_ptr<reconciler::Controller> controller;
  // With more than one worker, the controller's work items run on these
  // (destroyed first: a crash ends the items in flight, writing nothing).
  std::unique_ptr<fk::testing::SteppedWorkers> workers;
};

std::optional<CacheKind> KindOf(const sim::ResourceKind* k) {
  if (k->plural == "sandboxes") return CacheKind::kSandboxes;
  if (k->plural == "networkpolicies") return CacheKind::kPolicies;
  if (k->plural == "pods") return CacheKind::kPods;
  return std::nullopt;
}

// One OpenShell lifecycle flow in progress, acted out one API call per step.
struct Flow {
  enum class Type { kCreate, kResume } type;
  std::string name;
  int step = 0;
  std::string fence_uid;  // as OpenShell read it
  int64_t fence_generation = 0;
};

class World {
 public:
  explicit World(uint64_t seed) : seed_(seed), rng_(seed), workers_(1 + seed % 4) {
    sim::SimOptions so;
    so.emulate_agent_sandbox = false;  // the agent-sandbox controller is an actor below
    so.history_limit = 16;             // no watches here: the cache reads the log below
    sim_ = std::make_unique<sim::Simulator>(so, time_);
    sim_->store().AddHook([this](const sim::StoredEvent& e) {
      auto kind = KindOf(e.kind);
      if (!kind) return;
      const char* version = *kind == CacheKind::kSandboxes ? "v1beta1" : "v1";
      log_.push_back({*kind, e.type == "DELETED",
                      std::make_shared<const json::value>(
                          sim::Simulator::ToVersion(*e.kind, e.object, version))});
      if (*kind == CacheKind::kSandboxes && e.type == "ADDED")
        names_.push_back(kube::MetadataString(e.object, "name"));
    });
    // On tmpfs where there is one: the simulation proves the protocol, not the disk.
    for (auto& w : delivery_weight_) w = 1 + rng_() % 8;
    journal_path_ = (std::filesystem::exists("/dev/shm") ? shm_dir_.path() : dir_.path()).string() +
                    "/journal.db";
  }

  // The whole run: set-up, the fault phase, the quiet phase, the final checks.
  // Returns "" or the first violation.
  std::string Run(int fault_steps) {
    Note("workers: " + std::to_string(workers_));
    Setup();
    Restart();
    for (step_ = 0; step_ < fault_steps && violation_.empty(); ++step_) Step();
    if (violation_.empty()) Quiesce();
    if (violation_.empty()) CheckConverged();
    return violation_;
  }
  std::string Trace() const {
    std::string out;
    for (const auto& line : trace_) out += "    " + line + "\n";
    return out;
  }

 private:
  // ---- the cluster, through the simulator's own request handling ------------

  json::value Api(const std::string& method, const std::string& target,
                  const std::string& body = "", const std::string& type = "application/json",
                  int* status = nullptr) {
    sim::ApiReply r = sim::HandleRequest(*sim_, {method, target, body, type}, "sim");
    if (status) *status = r.status;
    boost::system::error_code ec;
    json::value v = json::parse(r.body, ec);
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
  const std::vector<std::string>& SandboxNames() const {
    return names_;
  }  // sandboxes are never deleted here

  void Setup() {
    Api("POST", kPolicies, json::serialize(sim::IntendedWorkloadPolicy(kNs, 5500)));
    Api("POST", kPolicies, json::serialize(sim::IntendedSupervisorPolicy(kNs)));
    const int n = 2 + static_cast<int>(rng_() % 4);
    for (int i = 0; i < n; ++i) CreateAdmitted("sb-" + std::to_string(i), rng_() % 4 != 0);
  }

  json::value NewPod(const std::string& name, const char* role, bool gated) {
    json::object pod = sim::BoundaryPod(kNs, name, role).as_object();
    if (gated)
      pod["spec"].as_object()["schedulingGates"] =
          json::array{{{"name", "openshell.ai/admission"}}};
    return Api("POST", kPods, json::serialize(pod));
  }

  std::pair<std::string, int64_t> WorkloadFence() {
    auto p = Server(kPolicies, "openshell-sandbox-workloads");
    if (!p) return {"", 0};
    return {kube::MetadataString(*p, "uid"), p->at("metadata").at("generation").as_int64()};
  }

  // A sandbox OpenShell admitted before the run, under the current fence.
  void CreateAdmitted(const std::string& name, bool running) {
    const std::string sup_uid =
        kube::MetadataString(NewPod("os-supervisor-" + name, "supervisor", false), "uid");
    std::string pod_uid = "none";
    if (running) pod_uid = kube::MetadataString(NewPod(name, "workload", false), "uid");
    const auto [fence_uid, fence_gen] = WorkloadFence();
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
          {"labels", {{"openshell.ai/managed-by", "openshell"}, {"openshell.ai/sandbox-id", name}}},
          {"annotations", json::object{}}}},
        {"spec",
         {{"operatingMode", mode},
          {"podTemplate",
           {{"spec", {{"schedulingGates", json::array{{{"name", "openshell.ai/admission"}}}}}}}}}}};
  }

  // ---- the fencekeeper instance -------------------------------------------

  void Restart() {
    crashing_ = true;   // what the dying instance's workers still try is never durable
    instance_.reset();  // a crash: nothing in memory survives
    crashing_ = false;
    auto in = std::make_unique<Instance>();
    in->identity = "fencekeeper_" + std::to_string(++incarnation_);
    journal::OpenOptions jo;
    jo.clock = &time_;
    jo.refuse_writes = [this] { return journal_refuses_ || crashing_; };
    auto j = journal::Journal::Open(journal_path_, jo);
    if (!j.ok()) return Fail("journal reopen failed: " + j.status().ToString());
    in->journal = std::move(*j);
    const std::string identity = in->identity;
    auto transport = std::make_unique<kube::FakeTransport>(
        [this, identity](const kube::HttpRequest& r, std::chrono::milliseconds timeout) {
          return FromFencekeeper(identity, r, timeout);
        });
    in->transport = transport.get();
    kube::ClientOptions co;
    co.time = &time_;
    co.qps = 0;
    co.jitter_seed = seed_ + incarnation_;
    co.max_retries = 2;
    kube::ClusterConfig cfg;
    cfg.server = "http://sim";
    in->client = kube::ApiClient::CreateWithTransport(cfg, co, std::move(transport));
    reconciler::LeaderOptions lo;
    lo.identity = identity;
    lo.ns = "default";
    lo.lease_duration = kLeaseDuration;
    lo.renew_deadline = kRenewDeadline;
    lo.time = &time_;
    in->elector = std::make_unique<reconciler::LeaderElector>(*in->client, lo, in->journal.get());
    in->events = std::make_unique<reconciler::EventRecorder>(*in->client, identity, time_,
                                                             /*senders=*/0, 8);
    in->cache = std::make_unique<SimCache>();
    reconciler::ControllerOptions o;
    o.time = &time_;
    o.retry_base = 100ms;
    o.retry_max = 20s;
    auto* elector = in->elector.get();
    o.write_fence = [elector] { return elector->WriteFenceUntil(); };
    in->controller = std::make_unique<reconciler::Controller>(*in->cache, *in->client, *in->journal,
                                                              o, nullptr, in->events.get());
    if (workers_ > 1) {
      in->workers = std::make_unique<fk::testing::SteppedWorkers>(
          workers_, [c = in->controller.get()] { return c->ProcessNextWorkItem(false); });
    }
    instance_ = std::move(in);
    for (int k = 0; k < 3; ++k) Relist(static_cast<CacheKind>(k));
    instance_->controller->EnqueuePendingIntents();
  }

  // A LIST of one kind replaces the cache (after a start or a dropped watch).
  void Relist(CacheKind kind) {
    SimCache& cache = *instance_->cache;
    std::set<std::pair<std::string, std::string>> keys;
    for (const auto& key : cache.Keys(kind, "")) keys.insert(key);
    cache.Clear(kind);
    const char* collection = kind == CacheKind::kSandboxes ? kSandboxes
                             : kind == CacheKind::kPods    ? kPods
                                                           : kPolicies;
    json::value list = Api("GET", collection);
    for (auto& item : list.at("items").as_array()) {
      const std::string name = kube::MetadataString(item, "name");
      keys.insert({kNs, name});
      cache.Put(kind, kNs, name, std::make_shared<const json::value>(item));
    }
    cache.cursor[static_cast<int>(kind)] = log_.size();
    for (const auto& [ns, name] : keys) instance_->controller->OnChange(kind, ns, name);
  }

  // Delivers the next logged event of one kind to the cache.
  bool Deliver(CacheKind kind) {
    SimCache& cache = *instance_->cache;
    size_t& cursor = cache.cursor[static_cast<int>(kind)];
    for (; cursor < log_.size(); ++cursor) {
      const LoggedEvent& e = log_[cursor];
      if (e.kind != kind) continue;
      ++cursor;
      const std::string ns = kube::MetadataString(*e.object, "namespace"),
                        name = kube::MetadataString(*e.object, "name");
      cache.Put(kind, ns, name, e.deleted ? nullptr : e.object);
      instance_->controller->OnChange(kind, ns, name);
      return true;
    }
    return false;
  }

  // ---- what fencekeeper sends: faults and invariants -----------------------

  Result<kube::HttpResponse> Reply(const sim::ApiReply& r) {
    return kube::HttpResponse{
        r.status, r.body, r.content_type,
        r.retry_after_seconds ? std::optional<int>(r.retry_after_seconds) : std::nullopt};
  }
  Result<kube::HttpResponse> ServerError(int status) {
    return kube::HttpResponse{status,
                              R"({"kind":"Status","apiVersion":"v1","status":"Failure","code":)" +
                                  std::to_string(status) + "}",
                              "application/json", std::nullopt};
  }

  Result<kube::HttpResponse> FromFencekeeper(const std::string& identity,
                                             const kube::HttpRequest& r,
                                             std::chrono::milliseconds timeout) {
    // A worker's request waits here while other workers run: the
    // interleaving. Waiting past its timeout, it is abandoned unsent, as the
    // real transport abandons a request whose deadline passes before it is
    // written.
    const MonoTime handed_over = time_.MonotonicNow();
    if (!fk::testing::SteppedWorkers::ParkIfWorker())
      return Status::IOError("the process died before sending (crash injected)");
    if (time_.MonotonicNow() - handed_over >= timeout)
      return Status::IOError("timeout: the deadline passed before the request was sent");
    const bool lease = r.target.find("/leases") != std::string::npos;
    const bool event = r.target.find("/events") != std::string::npos;
    const bool sandbox_patch = r.method == "PATCH" && r.target.rfind(kSandboxes, 0) == 0;
    if (lease && lease_stalled_)
      return Status::IOError("timeout: the lease request hung (injected)");
    if (event && events_fail_) return ServerError(503);
    if (r.method == "GET" && get_faults_ > 0) {
      --get_faults_;
      return rng_() % 2 ? Result<kube::HttpResponse>(Status::IOError("connection reset (injected)"))
                        : ServerError(503);
    }
    if (!sandbox_patch) {
      sim::ApiReply reply =
          sim::HandleRequest(*sim_, {r.method, r.target, r.body, r.content_type}, "sim");
      if (lease && (reply.status == 200 || reply.status == 201) && r.method != "GET")
        last_renewal_[identity] = time_.MonotonicNow();
      return Reply(reply);
    }
    CheckPatch(identity, r);
    return PatchWithFault(r);
  }

  Result<kube::HttpResponse> PatchWithFault(const kube::HttpRequest& r) {
    const int fault = patch_faults_ > 0 ? static_cast<int>(rng_() % 5) : -1;
    if (fault >= 0) --patch_faults_;
    const std::string name = r.target.substr(std::string(kSandboxes).size() + 1);
    switch (fault) {
      case 0:
        Note("  fault: PATCH " + name + " refused with 503 before applying");
        return ServerError(503);
      case 1:
        Note("  fault: PATCH " + name + " reset before applying");
        return Status::IOError("connection reset (injected)");
      case 2:
        Note("  fault: a concurrent writer changes " + name + " first");
        Patch(std::string(kSandboxes) + "/" + name,
              {{"metadata", {{"annotations", {{"sim/touched", std::to_string(step_)}}}}}});
        break;
      case 3:
        Note("  fault: 429 for PATCH " + name);
        return ServerError(429);
      default:
        break;
    }
    sim::ApiReply reply =
        sim::HandleRequest(*sim_, {r.method, r.target, r.body, r.content_type}, "sim");
    if (reply.status == 200) {
      boost::system::error_code ec;
      json::value v = json::parse(reply.body, ec);
      landed_[kube::MetadataString(v, "uid")] = v.at("metadata").at("generation").as_int64();
    }
    Note("  -> " + std::to_string(reply.status));
    if (fault == 4) {
      Note("  fault: the response to PATCH " + name + " is lost (status " +
           std::to_string(reply.status) + ")");
      return Status::IOError("connection reset after the request was sent (injected)");
    }
    return Reply(reply);
  }

  // I1, I3, I5, I6, I7 at the moment a suspend PATCH reaches the server.
  void CheckPatch(const std::string& identity, const kube::HttpRequest& r) {
    boost::system::error_code ec;
    json::value body = json::parse(r.body, ec);
    const std::string seq_text = ec ? "" : Annotation(body, kSeqAnnotation);
    const std::string rv = ec ? "" : kube::MetadataString(body, "resourceVersion");
    const std::string name = r.target.substr(std::string(kSandboxes).size() + 1);
    Note("  PATCH " + name + " seq " + seq_text + " rv " + rv + " by " + identity);
    // I6: the sender's lease is held and not lapsed.
    auto renewed = last_renewal_.find(identity);
    if (renewed == last_renewal_.end() ||
        time_.MonotonicNow() >= renewed->second + kLeaseDuration) {
      return Fail("I6: " + identity + " sent a PATCH for " + name + " with a lapsed lease");
    }
    // I1: the intent is durable.
    bool durable = false;
    if (!seq_text.empty()) {
      const int64_t seq = std::stoll(seq_text);
      (void)instance_->journal->ForEachEvent(seq, seq, [&](const domain::Event& e) {
        const auto* intent = std::get_if<domain::SuspendIntent>(&e.body);
        durable = intent && intent->resource_version == rv && e.name == name;
        return Status::Ok();
      });
    }
    if (!durable)
      return Fail("I1: PATCH for " + name + " (seq '" + seq_text + "') without a durable intent");
    auto current = Server(kSandboxes, name);
    if (!current) return;
    // I3: not already suspended by us in this episode.
    const std::string uid = kube::MetadataString(*current, "uid");
    auto landed = landed_.find(uid);
    if (landed != landed_.end() &&
        current->at("metadata").at("generation").as_int64() == landed->second) {
      return Fail("I3: " + name +
                  " was PATCHed again in the episode fencekeeper already suspended it in");
    }
    if (kube::MetadataString(*current, "resourceVersion") != rv)
      return;  // the PATCH will not apply
    // I5, from the objects themselves (not through decide(), which a bug could share).
    if (InAdmittingWindow(*current))
      return Fail("I5: PATCH for " + name + " inside its admitting window");
    // I7: what the cluster itself says about this sandbox now.
    const domain::Decision truth = domain::decide(Truth(*current));
    if (truth.verdict != domain::Verdict::kSuspend) {
      return Fail("I7: PATCH would suspend " + name + ", which the cluster says is " +
                  domain::ToString(truth.verdict));
    }
  }

  // docs/design.md#decision-table, row 1a, read straight off the server's objects.
  bool InAdmittingWindow(const json::value& sandbox) {
    auto ann = [&](const char* key) { return Annotation(sandbox, key); };
    const std::string op = ann(kube::kBootstrapOperationAnnotation);
    const std::string started = ann("openshell.ai/sandbox-runtime-bootstrap-started-at-ms");
    if (ann(kube::kBootstrappingAnnotation) != "true" || (op != "create" && op != "restart") ||
        ann("openshell.ai/sandbox-runtime-bootstrap-phase") != "preparing" || started.empty() ||
        started.find_first_not_of("0123456789") != std::string::npos || started.size() > 15) {
      return false;
    }
    if (std::llabs(time_.NowMs() - std::stoll(started)) >= kGraceMs) return false;
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
    auto policy = Server(kPolicies, "openshell-sandbox-workloads");
    auto sup_policy = Server(kPolicies, "openshell-sandbox-supervisors");
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

  // ---- the actors ------------------------------------------------------------

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
    auto& ann = sb["metadata"].as_object()["annotations"].as_object();
    ann[kube::kBootstrappingAnnotation] = "true";
    ann[kube::kBootstrapOperationAnnotation] = "create";
    ann["openshell.ai/sandbox-runtime-bootstrap-phase"] = "preparing";
    ann["openshell.ai/sandbox-runtime-bootstrap-started-at-ms"] = std::to_string(time_.NowMs());
    Api("POST", kSandboxes, json::serialize(sb));
    flows_.push_back({Flow::Type::kCreate, name, 0, "", 0});
  }

  bool StartResume(bool stale_user) {
    std::vector<std::string> candidates;
    for (const auto& name : SandboxNames()) {
      auto sb = Server(kSandboxes, name);
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
    flows_.push_back({Flow::Type::kResume, name, 0, "", 0});
    return true;
  }

  static json::value Ann(const std::string& key, json::value v) {
    return {{"metadata", {{"annotations", {{key, std::move(v)}}}}}};
  }

  // One API call of one flow (docs/design.md#openshells-create-and-resume-flows).
  void AdvanceFlow(Flow& f) {
    const std::string path = std::string(kSandboxes) + "/" + f.name;
    const std::string sup = "os-supervisor-" + f.name;
    const std::string prefix =
        "openshell: " + std::string(f.type == Flow::Type::kCreate ? "create " : "resume ") + f.name;
    auto pod_uid = [&](const std::string& pod) {
      auto p = Server(kPods, pod);
      return p ? kube::MetadataString(*p, "uid") : std::string();
    };
    const bool create = f.type == Flow::Type::kCreate;
    switch (f.step) {
      case 0:  // create: the gated supervisor; resume: replace the supervisor
        Note(prefix + ": new gated supervisor pod");
        Api("DELETE", std::string(kPods) + "/" + sup);
        NewPod(sup, "supervisor", true);
        break;
      case 1: {  // read the fence, set Running (resume: and the bootstrap annotations)
        std::tie(f.fence_uid, f.fence_generation) = WorkloadFence();
        Note(prefix + ": Running");
        json::value p = {{"spec", {{"operatingMode", "Running"}}}};
        if (!create) {
          p = {{"spec", {{"operatingMode", "Running"}}},
               {"metadata",
                {{"annotations",
                  {{kube::kBootstrappingAnnotation, "true"},
                   {kube::kBootstrapOperationAnnotation, "restart"},
                   {"openshell.ai/sandbox-runtime-bootstrap-phase", "preparing"},
                   {"openshell.ai/sandbox-runtime-bootstrap-started-at-ms",
                    std::to_string(time_.NowMs())},
                   {kube::kSupervisorUidAnnotation, pod_uid(sup)}}}}}};
        }
        Patch(path, p);
        break;
      }
      case 2: {  // wait for the workload pod, then record the fence and the pods (late, §5.5 step
                 // 7)
        const std::string pod = pod_uid(f.name);
        if (pod.empty()) return;  // not yet: agent-sandbox has not created it
        if (!create) std::tie(f.fence_uid, f.fence_generation) = WorkloadFence();
        Note(prefix + ": fence and pod annotations");
        Patch(path, {{"metadata",
                      {{"annotations",
                        {{kube::kFenceUidAnnotation, f.fence_uid},
                         {kube::kFenceGenerationAnnotation, std::to_string(f.fence_generation)},
                         {kube::kWorkloadUidAnnotation, pod},
                         {kube::kSupervisorUidAnnotation, pod_uid(sup)}}}}}});
        break;
      }
      case 3:
        Note(prefix + ": un-gate pods");
        Patch(std::string(kPods) + "/" + f.name, {{"spec", {{"schedulingGates", json::array{}}}}});
        Patch(std::string(kPods) + "/" + sup, {{"spec", {{"schedulingGates", json::array{}}}}});
        break;
      case 4:
        Note(prefix + ": phase released");
        Patch(path, Ann("openshell.ai/sandbox-runtime-bootstrap-phase", "released"));
        break;
      case 5:
        Note(prefix + ": bootstrap complete");
        Patch(path, {{"metadata",
                      {{"annotations",
                        {{kube::kBootstrappingAnnotation, nullptr},
                         {kube::kBootstrapOperationAnnotation, nullptr},
                         {"openshell.ai/sandbox-runtime-bootstrap-phase", nullptr},
                         {"openshell.ai/sandbox-runtime-bootstrap-started-at-ms", nullptr}}}}}});
        break;
    }
    ++f.step;
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

  // ---- the scheduler -----------------------------------------------------------

  void Step() {
    const int roll = static_cast<int>(rng_() % 100);
    Instance& in = *instance_;
    if (roll < 20) {
      // Each seed lets the kinds lag by different amounts (weights 1..8), so
      // one cache trails the others for long stretches.
      const uint64_t total = delivery_weight_[0] + delivery_weight_[1] + delivery_weight_[2];
      uint64_t pick = rng_() % total;
      int k = 0;
      while (pick >= delivery_weight_[k]) pick -= delivery_weight_[k++];
      const auto kind = static_cast<CacheKind>(k);
      if (Deliver(kind))
        Note("cache: deliver one " +
             std::string(kind == CacheKind::kSandboxes ? "sandbox"
                         : kind == CacheKind::kPods    ? "pod"
                                                       : "policy") +
             " event");
    } else if (roll < 40) {
      RunWorker(in);
    } else if (roll < 48) {
      time_.Advance(std::chrono::milliseconds(rng_() % 3000));
    } else if (roll < 49) {
      Note("time: a long pause");
      time_.Advance(std::chrono::milliseconds(20000 + rng_() % 360000));
    } else if (roll < 51) {
      if (created_ < 6) StartCreate();
    } else if (roll < 60) {
      if (!flows_.empty()) AdvanceFlow(flows_[rng_() % flows_.size()]);
      flows_.erase(
          std::remove_if(flows_.begin(), flows_.end(), [](const Flow& f) { return f.step > 5; }),
          flows_.end());
    } else if (roll < 62) {
      StartResume(/*stale_user=*/false);
    } else if (roll < 63) {
      StartResume(/*stale_user=*/true);
    } else if (roll < 69) {
      auto names = SandboxNames();
      if (!names.empty()) AgentSandbox(names[rng_() % names.size()]);
    } else if (roll < 70) {
      ChangeFence();
    } else if (roll < 72) {
      Note("controller: resync");
      in.controller->EnqueueAll();
    } else if (roll < 73) {
      Note("cache: watch dropped, relist");
      Relist(static_cast<CacheKind>(rng_() % 3));
    } else if (roll < 81) {
      const bool held = Renew();
      Note(std::string("lease: renew ") + (held ? "ok" : "failed"));
    } else if (roll < 83) {
      in.events->SendQueued();
    } else if (roll < 87) {
      patch_faults_ = 1 + static_cast<int>(rng_() % 3);
    } else if (roll < 89) {
      get_faults_ = 1 + static_cast<int>(rng_() % 4);
    } else if (roll < 90) {
      events_fail_ = !events_fail_;
    } else if (roll < 93) {
      journal_refuses_ = !journal_refuses_;
      Note(std::string("journal: ") + (journal_refuses_ ? "refuses writes" : "takes writes again"));
    } else if (roll < 95) {
      lease_stalled_ = !lease_stalled_;
      Note(std::string("lease: renewals ") + (lease_stalled_ ? "stall" : "flow again"));
    } else if (roll < 96) {
      Note("crash: the process dies and restarts");
      Restart();
    }
  }

  // One worker runs: to its next request, or through a work item.
  void RunWorker(Instance& in) {
    if (!in.workers) {
      if (in.controller->ProcessNextWorkItem(false)) Note("controller: one work item");
      return;
    }
    const int w = static_cast<int>(rng_() % in.workers->size());
    const bool resumed = in.workers->parked(w);
    Note("controller: worker " + std::to_string(w) + (resumed ? " resumes" : " starts"));
    switch (in.workers->Run(w)) {
      case fk::testing::SteppedWorkers::Slice::kParked:
        Note("  worker " + std::to_string(w) + " waits for its request");
        break;
      case fk::testing::SteppedWorkers::Slice::kFinished:
        Note("  worker " + std::to_string(w) + " finished its work item");
        break;
      case fk::testing::SteppedWorkers::Slice::kIdle:
        break;
    }
  }

  // Faults stop; OpenShell finishes its flows; everything runs until nothing is left to do.
  void Quiesce() {
    Note("---- faults stop ----");
    patch_faults_ = get_faults_ = 0;
    events_fail_ = journal_refuses_ = lease_stalled_ = false;
    // Bounded: a run that has not settled within this many rounds violates I4.
    for (int i = 0, idle = 0; i < 400 && idle < 3 && violation_.empty(); ++i) {
      for (auto& f : flows_) AdvanceFlow(f);
      flows_.erase(
          std::remove_if(flows_.begin(), flows_.end(), [](const Flow& f) { return f.step > 5; }),
          flows_.end());
      const size_t events_before = log_.size();
      for (const auto& name : SandboxNames()) AgentSandbox(name);
      bool busy = log_.size() != events_before || !flows_.empty();
      for (int k = 0; k < 3; ++k) {
        while (Deliver(static_cast<CacheKind>(k))) busy = true;
      }
      Renew();
      if (i % 10 == 0) instance_->controller->EnqueueAll();
      if (instance_->workers) {
        busy |= instance_->workers->Drain(200);
      } else {
        for (int n = 0; n < 50 && instance_->controller->ProcessNextWorkItem(false); ++n)
          busy = true;
      }
      busy |= instance_->controller->queue().NextDue().has_value() || log_.size() != events_before;
      instance_->events->SendQueued();
      idle = busy ? 0 : idle + 1;
      time_.Advance(busy ? 2s : 10s);
    }
  }

  // I2 and I4 once everything has settled.
  void CheckConverged() {
    std::map<int64_t, domain::Event> intents;
    std::map<int64_t, domain::Outcome> outcomes;
    (void)instance_->journal->ForEachEvent(
        1, instance_->journal->state().last_seq, [&](const domain::Event& e) {
          if (std::holds_alternative<domain::SuspendIntent>(e.body)) intents[e.seq] = e;
          if (const auto* o = std::get_if<domain::SuspendOutcome>(&e.body))
            outcomes[e.ref_seq] = o->outcome;
          return Status::Ok();
        });
    std::map<std::string, std::string>
        marker_by_uid;  // the server's fail-closed-journal-seq per sandbox uid
    for (const auto& name : SandboxNames()) {
      auto sb = Server(kSandboxes, name);
      marker_by_uid[kube::MetadataString(*sb, "uid")] = Annotation(*sb, kSeqAnnotation);
      const domain::Snapshot snap = Truth(*sb);
      const domain::Decision truth = domain::decide(snap);
      if (truth.verdict == domain::Verdict::kSuspend && snap.sandbox.should_run) {
        return Fail("I4: " + name + " still runs though it must fail closed (" + truth.note + ")");
      }
    }
    std::map<std::string, int64_t> last_applied_by_uid;
    for (const auto& [seq, e] : intents) {
      auto o = outcomes.find(seq);
      if (o == outcomes.end())
        return Fail("I2: intent " + std::to_string(seq) + " for " + e.name + " still pending");
      if (o->second == domain::Outcome::kApplied) last_applied_by_uid[e.uid] = seq;
      auto marker = marker_by_uid.find(e.uid);
      if (marker != marker_by_uid.end() && marker->second == std::to_string(seq) &&
          o->second != domain::Outcome::kApplied) {
        return Fail("I2: " + e.name + " carries seq " + std::to_string(seq) +
                    " but the journal says " + domain::ToString(o->second));
      }
    }
    for (const auto& [uid, seq] : last_applied_by_uid) {
      auto marker = marker_by_uid.find(uid);
      if (marker != marker_by_uid.end() && marker->second != std::to_string(seq)) {
        return Fail("I2: journal says seq " + std::to_string(seq) +
                    " applied, the sandbox carries '" + marker->second + "'");
      }
    }
  }

  bool Renew() { return instance_->elector->TryAcquireOrRenew(); }

  void Note(const std::string& line) {
    trace_.push_back("[" + std::to_string(step_) + "] " + line);
    if (trace_.size() > 60) trace_.pop_front();
  }
  void Fail(const std::string& what) {
    if (violation_.empty()) violation_ = "step " + std::to_string(step_) + ": " + what;
  }

  const uint64_t seed_;
  std::mt19937_64 rng_;
  const int workers_;      // 1: work items on the scheduler's thread; more: SteppedWorkers
  bool crashing_ = false;  // the instance is being torn down
  ManualTimeSource time_;
  fk::testing::TempDir dir_;
  fk::testing::TempDir shm_dir_{"/dev/shm"};
  std::string journal_path_;
  std::unique_ptr<sim::Simulator> sim_;
  // Every write of the kinds fencekeeper caches, in resourceVersion order.
  struct LoggedEvent {
    CacheKind kind;
    bool deleted;
    kube::ObjectPtr object;  // in the version fencekeeper reads
  };
  std::vector<LoggedEvent> log_;
  std::vector<std::string> names_;
  std::unique_ptr<Instance> instance_;
  int incarnation_ = 0;
  int created_ = 0;
  int step_ = 0;
  std::vector<Flow> flows_;
  uint64_t delivery_weight_[3] = {1, 1, 1};  // how often each kind's cache catches up
  int patch_faults_ = 0, get_faults_ = 0;
  bool events_fail_ = false, journal_refuses_ = false, lease_stalled_ = false;
  std::map<std::string, MonoTime>
      last_renewal_;                       // by identity: the last lease write the server accepted
  std::map<std::string, int64_t> landed_;  // by sandbox uid: generation our last applied PATCH left
  std::deque<std::string> trace_;
  std::string violation_;
};

uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// Runs one seed; on a violation prints the seed, the violation and the last steps.
std::string RunSeed(uint64_t seed) {
  World world(seed);
  const int steps = 200 + static_cast<int>(seed % 200);
  std::string violation = world.Run(steps);
  if (violation.empty()) return "";
  return "seed " + std::to_string(seed) + " (replay: FK_SIM_SEED=" + std::to_string(seed) +
         " build/fencekeeper_tests --gtest_filter='Simulation.*'): " + violation +
         "\n  last steps:\n" + world.Trace();
}

class QuietLogs {
 public:
  QuietLogs() : level_(spdlog::get_level()) { spdlog::set_level(spdlog::level::off); }
  ~QuietLogs() { spdlog::set_level(level_); }

 private:
  spdlog::level::level_enum level_;
};

TEST(Simulation, SeededFaultSchedulesKeepEveryInvariant) {
  QuietLogs quiet;
  if (const uint64_t one = EnvNumber("FK_SIM_SEED", 0)) {
    const std::string failure = RunSeed(one);
    EXPECT_TRUE(failure.empty()) << failure;
    return;
  }
  const uint64_t first = EnvNumber("FK_SIM_FIRST_SEED", 1);
  const uint64_t count = EnvNumber("FK_SIM_SEEDS", 1000);
  int failed = 0;
  for (uint64_t seed = first; seed < first + count && failed < 3; ++seed) {
    const std::string failure = RunSeed(seed);
    if (!failure.empty()) {
      ++failed;
      ADD_FAILURE() << failure;
    }
  }
}

}  // namespace
}  // namespace fk::simulation
