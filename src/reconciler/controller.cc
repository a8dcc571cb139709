#include "reconciler/controller.h"

#include "common/log.h"
#include "domain/decision.h"
#include "reconciler/scope_log.h"

namespace fk::reconciler {
namespace {

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  const auto slash = key.find('/');
  return {key.substr(0, slash), key.substr(slash + 1)};
}

// controller-runtime's result label: an error is retried with backoff;
// requeue_after comes back after a delay the reconciler chose.
const char* ResultLabel(ReconcileResult::Next next) {
  switch (next) {
    case ReconcileResult::Next::kRetry:
      return "error";
    case ReconcileResult::Next::kAfter:
      return "requeue_after";
    case ReconcileResult::Next::kDone:
      break;
  }
  return "success";
}

ReconcilerOptions ReconcilerOptionsFrom(const ControllerOptions& o) {
  ReconcilerOptions r;
  r.sandbox_version = o.sandbox_version;
  r.boundary_port = o.boundary_port;
  r.write_fence = o.write_fence;
  r.writer_id = o.writer_id;
  return r;
}

// Whether a namespace exists, for CoverageWatch: 200 yes, 404 no; anything
// else (403 without `namespaces get`, no answer) cannot tell.
CoverageWatch::Exists NamespaceExists(kube::ApiClient& client) {
  return [&client](const std::string& ns) -> std::optional<bool> {
    const kube::ApiResponse r = client.Get("/api/v1/namespaces/" + ns);
    if (r.status == 200) return true;
    if (r.status == 404) return false;
    return std::nullopt;
  };
}

TimeSource& TimeOf(const ControllerOptions& o) {
  return o.time ? *o.time : RealTimeSource::Instance();
}

std::unique_ptr<InformerCache> MakeCache(kube::ApiClient& client, const ControllerOptions& o) {
  CacheScope scope{o.namespaces, o.selector, o.sandbox_version, o.informer, o.boundary_port};
  if (!scope.informer.time) scope.informer.time = &TimeOf(o);
  return std::make_unique<InformerCache>(client, scope);
}

}  // namespace

Controller::Controller(kube::ApiClient& client, journal::Journal& journal,
                       ControllerOptions options, Metrics* metrics)
    : own_cache_(MakeCache(client, options)),
      cache_(*own_cache_),
      client_(client),
      journal_(journal),
      options_(std::move(options)),
      metrics_(metrics),
      time_(TimeOf(options_)),
      // As many Event senders as workers: Events keep pace with the
      // transitions without ever holding one up (docs/design.md#events).
      own_events_(options_.create_events
                      ? std::make_unique<EventRecorder>(
                            client, options_.instance, time_, std::max(1, options_.workers),
                            EventRecorder::kDefaultCapacity, metrics_, options_.write_fence)
                      : nullptr),
      events_(own_events_.get()),
      reconciler_(cache_, client_, journal_, time_, events_, metrics_,
                  ReconcilerOptionsFrom(options_)),
      queue_(time_, options_.retry_base, options_.retry_max, metrics_),
      coverage_(options_.namespaces, NamespaceExists(client_)) {
  own_cache_->Subscribe([this](CacheKind kind, const std::string& ns, const std::string& name) {
    OnChange(kind, ns, name);
  });
  if (metrics_) metrics_->MaxConcurrentReconciles(std::max(1, options_.workers));
}

Controller::Controller(const ClusterCache& cache, kube::ApiClient& client,
                       journal::Journal& journal, ControllerOptions options, Metrics* metrics,
                       EventSink* events)
    : cache_(cache),
      client_(client),
      journal_(journal),
      options_(std::move(options)),
      metrics_(metrics),
      time_(TimeOf(options_)),
      events_(events),
      reconciler_(cache_, client_, journal_, time_, events_, metrics_,
                  ReconcilerOptionsFrom(options_)),
      queue_(time_, options_.retry_base, options_.retry_max, metrics_),
      coverage_(options_.namespaces, NamespaceExists(client_)) {
  if (metrics_) metrics_->MaxConcurrentReconciles(std::max(1, options_.workers));
}

Controller::~Controller() { Stop(); }

const std::vector<std::unique_ptr<kube::Informer>>& Controller::informers() const {
  static const std::vector<std::unique_ptr<kube::Informer>> kNone;
  return own_cache_ ? own_cache_->informers() : kNone;
}

std::vector<ReadinessCheck> Controller::CacheChecks() const {
  if (own_cache_) return own_cache_->Checks();
  const bool synced = Synced();
  return {{"caches", synced, synced ? "" : "not synced"}};
}

std::vector<ReadinessCheck> Controller::CoverageChecks() const { return coverage_.Checks(); }

std::map<std::string, int> Controller::CoverageCounts() const { return coverage_.Counts(); }

bool Controller::Stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

void Controller::OnChange(CacheKind kind, const std::string& ns, const std::string& name) {
  switch (kind) {
    case CacheKind::kSandboxes:
      queue_.Add(Key(ns, name));
      break;
    case CacheKind::kPolicies:
      if (name == domain::kWorkloadPolicyName || name == domain::kSupervisorPolicyName)
        EnqueueNamespace(ns);
      break;
    case CacheKind::kPods:
      OnPod(ns, name);
      break;
  }
}

void Controller::EnqueueNamespace(const std::string& ns) {
  for (const auto& [sb_ns, name] : cache_.SandboxKeys(ns)) queue_.Add(Key(sb_ns, name));
}

// A pod concerns the sandboxes that name it as their workload or supervisor
// pod: found through the cache's pod index, not by reading every sandbox.
void Controller::OnPod(const std::string& ns, const std::string& name) {
  for (const std::string& sandbox : cache_.SandboxesNamingPod(ns, name))
    queue_.Add(Key(ns, sandbox));
}

void Controller::EnqueueAll() {
  for (const auto& [ns, name] : cache_.SandboxKeys("")) queue_.Resync(Key(ns, name));
}

void Controller::EnqueuePendingIntents() {
  journal_.Read([this](const domain::JournalState& s) {
    for (const auto& [seq, intent] : s.pending_intents) queue_.Add(Key(intent.ns, intent.name));
    // And every sandbox the journal remembers: one deleted while fencekeeper
    // was down is never announced by the informer, and must be forgotten.
    for (const auto& [uid, r] : s.sandboxes) queue_.Add(Key(r.ns, r.name));
  });
}

bool Controller::Synced() const { return cache_.Synced(); }

ControllerStats Controller::stats() const {
  ControllerStats s;
  static_cast<ReconcilerStats&>(s) = reconciler_.stats();
  {
    std::lock_guard lock(mu_);
    s.resync_passes = resync_passes_;
  }
  if (own_events_) {
    const EventStats e = own_events_->stats();
    s.events_created = e.created;
    s.events_failed = e.failed + e.dropped;
  }
  return s;
}

std::map<std::string, int> Controller::VerdictCounts() const {
  std::lock_guard lock(mu_);
  return verdicts_;
}

void Controller::Start() {
  {
    std::lock_guard lock(mu_);
    if (started_) return;
    started_ = true;
  }
  UpdateVerdicts();
  EnqueuePendingIntents();
  if (own_cache_) own_cache_->Start();
  for (int i = 0; i < std::max(1, options_.workers); ++i)
    workers_.emplace_back([this, i] { Worker(/*first=*/i == 0); });
  resyncer_ =
      std::thread([this, first = time_.MonotonicNow() + options_.resync] { Resyncer(first); });
}

void Controller::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && workers_.empty()) return;
    stopping_ = true;
  }
  stop_.Fire();
  queue_.ShutDown();
  client_.Stop();  // interrupts calls in flight so each worker finishes its step promptly
  for (auto& w : workers_) w.join();
  workers_.clear();
  if (resyncer_.joinable()) resyncer_.join();
  if (own_cache_) own_cache_->Stop();
  if (own_events_) own_events_->Stop();
}

void Controller::Resyncer(MonoTime first) {
  // The first pass is due a period after Start (fixed there, whenever this
  // thread gets to run), each next one a period after the last ended: passes
  // are never closer than the period, however late the thread was. Waited
  // for without moving the clock (TimeSource::WaitUntil): a manual clock's
  // resyncs happen where its driver puts them.
  const auto period = std::max(options_.resync, std::chrono::milliseconds(1));
  for (MonoTime due = first; time_.WaitUntil(due, stop_); due = time_.MonotonicNow() + period) {
    if (!Synced()) continue;
    EnqueueAll();  // every cached sandbox again, from the caches: no API request
    coverage_.Update(cache_);
    std::lock_guard lock(mu_);
    ++resync_passes_;
  }
}

void Controller::Worker(bool first) {
  // Nothing is decided before every cache has synced: a half-filled cache
  // would look like missing fences and pods.
  while (!Synced()) {
    if (!time_.SleepFor(std::chrono::milliseconds(20), stop_)) return;
  }
  if (first) {
    log::Info("caches synced")
        .Str("scope", ScopeText(options_.namespaces))
        .Str("caches", CacheSummary(cache_, options_.namespaces));
    coverage_.Update(cache_);
  }
  while (ProcessNextWorkItem(/*block=*/true)) {
  }
}

std::string Controller::VerdictOf(const std::string& ns, const std::string& name) const {
  SandboxPtr sandbox = cache_.Sandbox(ns, name);
  if (!sandbox) return "";
  const std::string uid = sandbox->uid;
  return journal_.Read([&](const domain::JournalState& s) -> std::string {
    auto it = s.sandboxes.find(uid);
    return it != s.sandboxes.end() && it->second.decision
               ? domain::ToString(it->second.decision->verdict)
               : "";
  });
}

bool Controller::ProcessNextWorkItem(bool block) {
  auto key = block ? queue_.Get() : queue_.TryGet();
  if (!key) return false;
  if (metrics_) metrics_->ActiveWorkers(+1);
  const auto [ns, name] = SplitKey(*key);
  const MonoTime started = time_.MonotonicNow();
  const ReconcileResult result = reconciler_.Reconcile(ns, name);
  if (metrics_)
    metrics_->Reconcile(ResultLabel(result.next),
                        std::chrono::duration<double>(time_.MonotonicNow() - started).count());
  CountVerdict(*key, VerdictOf(ns, name));
  switch (result.next) {
    case ReconcileResult::Next::kRetry:
      if (!Stopping()) queue_.AddRateLimited(*key, result.retry_after_seconds);
      break;
    case ReconcileResult::Next::kAfter:
      queue_.Forget(*key);
      queue_.AddAfter(*key, result.after);
      break;
    case ReconcileResult::Next::kDone:
      queue_.Forget(*key);
      break;
  }
  queue_.Done(*key);
  if (metrics_) metrics_->ActiveWorkers(-1);
  const size_t depth = queue_.Depth();
  // Idle: fold the WAL into the main file and truncate it (a bounded WAL:
  // docs/design.md#growth-with-changes-not-time). Never waits for readers; a
  // no-op when nothing was written. A failure is not this item's: the WAL
  // just stays until the next idle moment, and the journal reports write
  // failures itself (journal_metrics.h), so the result is dropped here.
  if (depth == 0) (void)journal_.Checkpoint();
  return true;
}

// The gauge counts each key's verdict as last seen: a key moves its count by
// its own change only (O(log n), not a recount), and a key whose sandbox is
// gone (or not decided) counts for nothing.
void Controller::CountVerdict(const std::string& key, const std::string& verdict) {
  std::map<std::string, int> counts;
  {
    std::lock_guard lock(mu_);
    auto it = counted_.find(key);
    const std::string before = it == counted_.end() ? "" : it->second;
    if (before == verdict) return;
    if (!before.empty()) --verdicts_[before];
    if (verdict.empty()) {
      counted_.erase(it);
    } else {
      ++verdicts_[verdict];
      counted_[key] = verdict;
    }
    counts = verdicts_;
  }
  if (metrics_) metrics_->SandboxesByVerdict(counts);
}

// At start, what the journal holds: a sandbox deleted while fencekeeper was
// down counts until its first pass forgets it.
void Controller::UpdateVerdicts() {
  std::map<std::string, std::string> by_key = journal_.Read([](const domain::JournalState& s) {
    std::map<std::string, std::string> out;
    for (const auto& [uid, r] : s.sandboxes)
      if (r.decision) out[Key(r.ns, r.name)] = domain::ToString(r.decision->verdict);
    return out;
  });
  std::map<std::string, int> counts;
  for (const auto& [key, verdict] : by_key) ++counts[verdict];
  if (metrics_) metrics_->SandboxesByVerdict(counts);
  std::lock_guard lock(mu_);
  counted_ = std::move(by_key);
  verdicts_ = std::move(counts);
}

}  // namespace fk::reconciler
