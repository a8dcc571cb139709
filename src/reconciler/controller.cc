#include "reconciler/controller.h"

#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <cstdio>

#include "common/backoff.h"
#include "domain/decision.h"
#include "kube/json_fields.h"
#include "kube/objects.h"

namespace fk::reconciler {
namespace json = boost::json;
using domain::Action;
using domain::Outcome;
using domain::Reason;
using domain::Verdict;

namespace {

enum Kind { kSandboxes = 0, kPolicies = 1, kPods = 2 };

constexpr const char* kReasonAnnotation = "openshell.ai/fail-closed-reason";
constexpr const char* kSeqAnnotation = "openshell.ai/fail-closed-journal-seq";
constexpr const char* kReadinessAnnotation = "openshell.ai/sandbox-runtime-readiness";

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

domain::ApiVersion VersionOf(const std::string& v) {
  return v == "v1alpha1" ? domain::ApiVersion::kV1alpha1 : domain::ApiVersion::kV1beta1;
}

std::string SandboxPath(const std::string& version, const std::string& ns, const std::string& name) {
  return kube::ResourcePath("agents.x-k8s.io", version, "sandboxes", ns, name);
}

std::optional<int64_t> GenerationOf(const std::string& body) {
  boost::system::error_code ec;
  json::value v = json::parse(body, ec);
  if (ec) return std::nullopt;
  const json::object* meta = kube::ObjectField(v, "metadata");
  const json::value* g = meta ? meta->if_contains("generation") : nullptr;
  if (g && g->is_int64()) return g->as_int64();
  return std::nullopt;
}

}  // namespace

std::string SuspendPatchBody(const std::string& api_version, const std::string& resource_version,
                             const std::string& reason, int64_t journal_seq) {
  json::object patch{{"metadata",
                      {{"resourceVersion", resource_version},
                       {"annotations",
                        {{kReadinessAnnotation, "unavailable"},
                         {kReasonAnnotation, reason},
                         {kSeqAnnotation, std::to_string(journal_seq)}}}}}};
  if (api_version == "v1alpha1") {
    patch["spec"] = {{"replicas", 0}};
  } else {
    patch["spec"] = {{"operatingMode", "Suspended"}};
  }
  return json::serialize(patch);
}

Controller::Controller(kube::ApiClient& client, journal::Journal& journal, ControllerOptions options, Metrics* metrics)
    : client_(client),
      journal_(journal),
      options_(std::move(options)),
      metrics_(metrics),
      time_(options_.time ? *options_.time : RealTimeSource::Instance()),
      queue_(time_, options_.retry_base, options_.retry_max) {
  std::vector<std::string> namespaces = options_.namespaces;
  if (namespaces.empty()) namespaces.push_back("");
  for (const std::string& ns : namespaces) {
    kube::InformerOptions o = options_.informer;
    o.ns = ns;
    o.label_selector = options_.selector;
    informers_.push_back(std::make_unique<kube::Informer>(
        client_, kube::ResourceRef{"agents.x-k8s.io", options_.sandbox_version, "sandboxes", true}, o));
    o.label_selector.clear();
    informers_.push_back(std::make_unique<kube::Informer>(
        client_, kube::ResourceRef{"networking.k8s.io", "v1", "networkpolicies", true}, o));
    o.label_selector = "openshell.ai/boundary-role";
    informers_.push_back(std::make_unique<kube::Informer>(client_, kube::ResourceRef{"", "v1", "pods", true}, o));
  }
  for (size_t i = 0; i < informers_.size(); ++i) {
    switch (static_cast<Kind>(i % 3)) {
      case kSandboxes:
        informers_[i]->Subscribe([this](const kube::Change& c) { queue_.Add(Key(c.ns, c.name)); });
        break;
      case kPolicies:
        informers_[i]->Subscribe([this](const kube::Change& c) {
          if (c.name == domain::kWorkloadPolicyName || c.name == domain::kSupervisorPolicyName) EnqueueNamespace(c.ns);
        });
        break;
      case kPods:
        informers_[i]->Subscribe([this](const kube::Change& c) { OnPod(c); });
        break;
    }
  }
}

Controller::~Controller() { Stop(); }

bool Controller::Stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

kube::ObjectPtr Controller::FindInformerObject(int kind, const std::string& ns, const std::string& name) const {
  for (size_t i = static_cast<size_t>(kind); i < informers_.size(); i += 3) {
    if (auto obj = informers_[i]->store().Get(ns, name)) return obj;
  }
  return nullptr;
}

std::vector<kube::ObjectPtr> Controller::SandboxesIn(const std::string& ns) const {
  std::vector<kube::ObjectPtr> out;
  for (size_t i = kSandboxes; i < informers_.size(); i += 3) {
    for (auto& o : informers_[i]->store().List(ns)) out.push_back(std::move(o));
  }
  return out;
}

void Controller::EnqueueNamespace(const std::string& ns) {
  for (const auto& sb : SandboxesIn(ns)) queue_.Add(Key(ns, kube::MetadataString(*sb, "name")));
}

// A pod concerns the sandboxes that name it as their workload or supervisor pod.
void Controller::OnPod(const kube::Change& c) {
  for (const auto& obj : SandboxesIn(c.ns)) {
    auto parsed = kube::ParseSandbox(*obj, VersionOf(options_.sandbox_version));
    if (!parsed.ok()) continue;
    if (parsed->workload_pod_name == c.name || parsed->supervisor_pod_name == c.name) {
      queue_.Add(Key(c.ns, parsed->observation.name));
    }
  }
}

bool Controller::Synced() const {
  for (const auto& i : informers_) {
    if (!i->HasSynced()) return false;
  }
  return true;
}

ControllerStats Controller::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::map<std::string, int> Controller::VerdictCounts() const {
  std::lock_guard lock(mu_);
  return verdicts_;
}

Result<journal::Journal::Recorded> Controller::RecordTimed(const domain::Evaluation& eval) {
  const auto start = time_.MonotonicNow();
  auto r = journal_.Record(eval);
  const double seconds = std::chrono::duration<double>(time_.MonotonicNow() - start).count();
  if (r.ok()) {
    if (r->appended && metrics_) metrics_->JournalAppend(r->appended, seconds);
    if (!journal_ok_.exchange(true)) spdlog::info("journal {} is writable again", journal_.path());
  } else {
    if (journal_ok_.exchange(false)) spdlog::error("journal write failed; no PATCH is sent until it is durable: {}", r.status().ToString());
    if (metrics_) metrics_->JournalError();
    std::lock_guard lock(mu_);
    ++stats_.journal_errors;
  }
  return r;
}

Result<int64_t> Controller::OutcomeTimed(int64_t seq, const domain::SuspendOutcome& outcome) {
  const auto start = time_.MonotonicNow();
  auto r = journal_.RecordOutcome(seq, outcome);
  const double seconds = std::chrono::duration<double>(time_.MonotonicNow() - start).count();
  if (r.ok()) {
    if (metrics_) metrics_->JournalAppend(1, seconds);
    journal_ok_ = true;
  } else {
    journal_ok_ = false;
    spdlog::error("cannot record the outcome of intent {}: {}", seq, r.status().ToString());
    if (metrics_) metrics_->JournalError();
    std::lock_guard lock(mu_);
    ++stats_.journal_errors;
  }
  return r;
}

Status Controller::ResolvePendingIntents() {
  const auto pending = journal_.state().pending_intents;  // a copy: outcomes change it
  for (const auto& [seq, intent] : pending) {
    domain::SuspendOutcome outcome;
    for (int attempt = 0;; ++attempt) {
      if (Stopping()) return Status::Busy("stopping before pending intents were resolved");
      kube::ApiResponse r = client_.Get(SandboxPath(options_.sandbox_version, intent.ns, intent.name));
      if (r.error.kind == kube::ApiErrorKind::kNotFound) {
        outcome = {Outcome::kSuperseded, std::nullopt, "sandbox no longer exists (checked at start-up)"};
        break;
      }
      if (!r.ok()) {
        spdlog::warn("cannot read {}/{} to resolve pending intent {}: {}; retrying", intent.ns, intent.name, seq,
                     r.error.ToString());
        std::unique_lock lock(mu_);
        cv_.wait_for(lock, ExponentialDelay(options_.retry_base, attempt, options_.retry_max),
                     [this] { return stopping_; });
        continue;
      }
      auto parsed = kube::ParseSandboxJson(r.body, VersionOf(options_.sandbox_version));
      boost::system::error_code ec;
      json::value obj = json::parse(r.body, ec);
      const std::string marker =
          ec ? "" : kube::StringField(kube::ObjectField(kube::ObjectField(obj, "metadata"), "annotations"), kSeqAnnotation).value_or("");
      if (!parsed.ok()) {
        outcome = {Outcome::kFailed, std::nullopt, "sandbox unreadable at start-up: " + parsed.status().message()};
      } else if (parsed->observation.uid != intent.uid) {
        outcome = {Outcome::kSuperseded, std::nullopt, "sandbox was recreated (new uid)"};
      } else if (marker == std::to_string(seq)) {
        outcome = {Outcome::kApplied, parsed->observation.generation, "confirmed at start-up"};
      } else if (!parsed->observation.should_run) {
        outcome = {Outcome::kSuperseded, std::nullopt, "sandbox found suspended by another writer at start-up"};
      } else {
        outcome = {Outcome::kFailed, std::nullopt, "PATCH not applied before the restart"};
      }
      break;
    }
    auto recorded = OutcomeTimed(seq, outcome);
    if (!recorded.ok()) return recorded.status();
    spdlog::info("resolved pending intent {} for {}/{}: {} ({})", seq, intent.ns, intent.name,
                 domain::ToString(outcome.outcome), outcome.detail);
    if (metrics_) metrics_->Transition(domain::ToString(intent.intent.reason), domain::ToString(outcome.outcome));
    std::lock_guard lock(mu_);
    ++stats_.resolved_intents;
  }
  return Status::Ok();
}

void Controller::Start() {
  {
    std::lock_guard lock(mu_);
    if (started_) return;
    started_ = true;
  }
  UpdateVerdicts();
  for (auto& i : informers_) i->Start();
  worker_ = std::thread([this] { Worker(); });
  resyncer_ = std::thread([this] { Resyncer(); });
}

void Controller::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !worker_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  queue_.ShutDown();
  client_.Stop();  // interrupts retries in flight so the worker finishes its step promptly
  if (worker_.joinable()) worker_.join();
  if (resyncer_.joinable()) resyncer_.join();
  for (auto& i : informers_) i->Stop();
}

void Controller::Resyncer() {
  std::unique_lock lock(mu_);
  while (!stopping_) {
    if (cv_.wait_for(lock, options_.resync, [this] { return stopping_; })) break;
    lock.unlock();
    if (Synced()) {
      // Every cached sandbox again, from the caches: no API request.
      for (size_t i = kSandboxes; i < informers_.size(); i += 3) {
        for (const auto& sb : informers_[i]->store().List()) {
          queue_.Add(Key(kube::MetadataString(*sb, "namespace"), kube::MetadataString(*sb, "name")));
        }
      }
    }
    lock.lock();
    if (Synced()) ++stats_.resync_passes;
  }
}

void Controller::Worker() {
  // Nothing is decided before every cache has synced: a half-filled cache
  // would look like missing fences and pods.
  while (!Synced()) {
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, std::chrono::milliseconds(20), [this] { return stopping_; })) return;
  }
  for (;;) {
    auto key = queue_.Get();
    if (!key) return;
    const Step step = Reconcile(*key);
    if (step == Step::kRetry && !Stopping()) {
      queue_.AddRateLimited(*key);
    } else {
      queue_.Forget(*key);
    }
    queue_.Done(*key);
    if (metrics_) metrics_->QueueDepth(queue_.Depth());
  }
}

void Controller::UpdateVerdicts() {
  std::map<std::string, int> counts;
  for (const auto& [uid, r] : journal_.state().sandboxes) {
    if (r.decision) ++counts[domain::ToString(r.decision->verdict)];
  }
  if (metrics_) metrics_->SandboxesByVerdict(counts);
  std::lock_guard lock(mu_);
  verdicts_ = std::move(counts);
}

Controller::Step Controller::Reconcile(const std::string& key) {
  {
    std::lock_guard lock(mu_);
    ++stats_.reconciles;
  }
  const auto slash = key.find('/');
  const std::string ns = key.substr(0, slash), name = key.substr(slash + 1);
  kube::ObjectPtr sandbox = FindInformerObject(kSandboxes, ns, name);
  if (!sandbox) return Step::kDone;  // deleted: nothing to fence
  // Verdict counts move by this sandbox's change only: O(log n), not a recount.
  const std::string uid = kube::MetadataString(*sandbox, "uid");
  auto verdict_of = [&]() -> std::string {
    auto it = journal_.state().sandboxes.find(uid);
    return it != journal_.state().sandboxes.end() && it->second.decision ? domain::ToString(it->second.decision->verdict) : "";
  };
  const std::string before = verdict_of();
  const Step step = Evaluate(ns, name, sandbox, 0);
  const std::string after = verdict_of();
  if (before != after) {
    std::map<std::string, int> counts;
    {
      std::lock_guard lock(mu_);
      if (!before.empty()) --verdicts_[before];
      if (!after.empty()) ++verdicts_[after];
      counts = verdicts_;
    }
    if (metrics_) metrics_->SandboxesByVerdict(counts);
  }
  return step;
}

Controller::Step Controller::Evaluate(const std::string& ns, const std::string& name, kube::ObjectPtr sandbox,
                                      int depth) {
  auto parsed = kube::ParseSandbox(*sandbox, VersionOf(options_.sandbox_version));
  if (!parsed.ok()) {
    spdlog::warn("skipping sandbox {}/{}: {}", ns, name, parsed.status().message());
    return Step::kDone;  // a malformed object never takes the reconciler down; its next change re-enqueues it
  }
  domain::Snapshot snap;
  snap.sandbox = parsed->observation;
  auto policy = [&](const char* policy_name, kube::PolicyRole role) {
    kube::ObjectPtr obj = FindInformerObject(kPolicies, ns, policy_name);
    auto p = kube::ParsePolicy(obj.get(), role, options_.boundary_port);
    if (p.ok()) return *p;
    // A policy we cannot read is present but not the intended one: fail closed.
    return domain::PolicyObservation{true, kube::MetadataString(*obj, "uid"), 0, false};
  };
  snap.workload_fence = policy(domain::kWorkloadPolicyName, kube::PolicyRole::kWorkload);
  snap.supervisor_fence = policy(domain::kSupervisorPolicyName, kube::PolicyRole::kSupervisor);
  auto pod = [&](const std::string& pod_name) {
    if (pod_name.empty()) return domain::PodObservation{};
    kube::ObjectPtr obj = FindInformerObject(kPods, ns, pod_name);
    auto p = kube::ParsePod(obj.get());
    return p.ok() ? *p : domain::PodObservation{};
  };
  snap.workload_pod = pod(parsed->workload_pod_name);
  snap.supervisor_pod = pod(parsed->supervisor_pod_name);
  snap.history = domain::history_for(journal_.state(), snap.sandbox.uid);

  domain::Evaluation eval{snap, domain::decide(snap), parsed->resource_version};
  auto recorded = RecordTimed(eval);
  if (!recorded.ok()) return Step::kRetry;  // nothing durable, so nothing sent
  if (recorded->appended > 0 && eval.decision.verdict == Verdict::kHold) {
    spdlog::info("sandbox {}/{} held: {}", ns, name, eval.decision.note);
  }
  if (!recorded->intent_seq) return Step::kDone;

  const int64_t seq = *recorded->intent_seq;
  const std::string reason = domain::ToString(eval.decision.reason);
  {
    std::lock_guard lock(mu_);
    ++stats_.patches;
  }
  kube::ApiResponse r = client_.MergePatch(SandboxPath(options_.sandbox_version, ns, name),
                                           SuspendPatchBody(options_.sandbox_version, parsed->resource_version, reason, seq));
  domain::SuspendOutcome outcome;
  Step step = Step::kDone;
  bool reread = false;
  if (r.ok()) {
    outcome = {Outcome::kApplied, GenerationOf(r.body), ""};
  } else if (r.error.kind == kube::ApiErrorKind::kConflict) {
    outcome = {Outcome::kConflict, std::nullopt, r.error.message};
    reread = true;
  } else if (r.error.kind == kube::ApiErrorKind::kNotFound) {
    outcome = {Outcome::kSuperseded, std::nullopt, "sandbox deleted before the PATCH"};
  } else {
    outcome = {Outcome::kFailed, std::nullopt, r.error.ToString()};
    step = Step::kRetry;
  }
  if (!OutcomeTimed(seq, outcome).ok()) return Step::kRetry;  // the intent stays pending; resolved on restart
  if (metrics_) metrics_->Transition(reason, domain::ToString(outcome.outcome));
  // One warning per fail-closed transition: when the suspend has landed. A
  // 409 or a failed attempt is part of the same transition, logged below warning.
  if (outcome.outcome == Outcome::kApplied) {
    spdlog::warn("fail-closed: suspended sandbox {}/{} (reason {}: {}; journal seq {})", ns, name, reason,
                 eval.decision.note, seq);
  } else if (outcome.outcome == Outcome::kFailed) {
    spdlog::error("suspend of {}/{} failed and will be retried: {} (journal seq {})", ns, name, outcome.detail, seq);
  } else {
    spdlog::info("suspend of {}/{} not applied: {} ({}; journal seq {})", ns, name, domain::ToString(outcome.outcome),
                 outcome.detail, seq);
  }
  {
    std::lock_guard lock(mu_);
    if (outcome.outcome == Outcome::kApplied) ++stats_.warnings;
    if (outcome.outcome == Outcome::kApplied) ++stats_.applied;
    if (outcome.outcome == Outcome::kConflict) ++stats_.conflicts;
    if (outcome.outcome == Outcome::kFailed) ++stats_.failures;
  }
  if (outcome.outcome == Outcome::kApplied && options_.create_events) CreateEvent(snap.sandbox, eval.decision, seq);
  if (reread) {
    // 409: the object changed under us. Read it again and decide again; never retry blindly.
    if (depth >= 3) return Step::kRetry;
    kube::ApiResponse fresh = client_.Get(SandboxPath(options_.sandbox_version, ns, name));
    if (fresh.error.kind == kube::ApiErrorKind::kNotFound) return Step::kDone;
    if (!fresh.ok()) return Step::kRetry;
    boost::system::error_code ec;
    json::value v = json::parse(fresh.body, ec);
    if (ec) return Step::kRetry;
    return Evaluate(ns, name, std::make_shared<const json::value>(std::move(v)), depth + 1);
  }
  return step;
}

void Controller::CreateEvent(const domain::SandboxObservation& sb, const domain::Decision& d, int64_t seq) {
  char suffix[24];
  std::snprintf(suffix, sizeof suffix, "%llx",
                static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                    time_.Now().time_since_epoch())
                                                    .count()));
  const std::string api_version = "agents.x-k8s.io/" + options_.sandbox_version;
  json::object event{
      {"apiVersion", "events.k8s.io/v1"},
      {"kind", "Event"},
      {"metadata", {{"name", sb.name + "." + suffix}, {"namespace", sb.ns}}},
      {"eventTime", FormatMicroTime(time_.Now())},
      {"type", "Warning"},
      {"reason", "FailClosedSuspended"},
      {"action", "Suspend"},
      {"reportingController", "openshell.ai/fencekeeper"},
      {"reportingInstance", options_.instance},
      {"regarding", {{"apiVersion", api_version}, {"kind", "Sandbox"}, {"namespace", sb.ns}, {"name", sb.name}, {"uid", sb.uid}}},
      {"note", std::string(domain::ToString(d.reason)) + ": " + d.note + " (journal seq " + std::to_string(seq) + ")"}};
  std::string note = event["note"].as_string().c_str();
  if (note.size() > 1024) event["note"] = note.substr(0, 1021) + "...";
  kube::ApiResponse r = client_.Send("POST", kube::ResourcePath("events.k8s.io", "v1", "events", sb.ns),
                                     json::serialize(event), "application/json");
  std::lock_guard lock(mu_);
  if (r.ok()) {
    ++stats_.events_created;
  } else {
    ++stats_.events_failed;  // an Event is a courtesy; it never blocks a transition
    spdlog::info("could not create the Event for {}/{}: {}", sb.ns, sb.name, r.error.ToString());
  }
}

}  // namespace fk::reconciler
