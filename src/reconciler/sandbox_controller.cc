#include "reconciler/sandbox_controller.h"

#include "common/log.h"
#include "reconciler/scope_log.h"

namespace fk::reconciler {
namespace {

ReconcilerOptions ReconcilerOptionsFrom(const SandboxControllerOptions& o) {
  ReconcilerOptions r;
  r.sandbox_version = o.sandbox_version;
  r.boundary_port = o.boundary_port;
  r.write_fence = o.write_fence;
  r.writer_id = o.writer_id;
  r.return_freed_memory = o.return_freed_memory;
  r.enforcement = o.enforcement;
  return r;
}

// Whether a namespace exists, for CoverageWatch: 200 yes, 404 no; anything
// else (403 without `namespaces get`, no answer) cannot tell.
CoverageWatch::Exists NamespaceExists(kube::ApiClient& client) {
  return [&client](const std::string& ns) -> std::optional<bool> {
    const int code =
        kube::HttpCode(client.Get(kube::ResourcePath(kube::NamespaceResource(), "", ns)));
    if (code == 200) return true;
    if (code == 404) return false;
    return std::nullopt;
  };
}

TimeSource& TimeOf(const SandboxControllerOptions& o) {
  return o.time ? *o.time : RealTimeSource::Instance();
}

}  // namespace

std::map<CacheKind, KeyMapper> SandboxMappers(const ClusterCache& cache) {
  return {
      {CacheKind::kSandboxes,
       [](const std::string& ns, const std::string& name) {
         return std::vector<ObjectKey>{{ns, name}};
       }},
      // Any policy may change the effective fence of every sandbox of its
      // namespace, and of no other.
      {CacheKind::kPolicies,
       [&cache](const std::string& ns, const std::string&) { return cache.SandboxKeys(ns); }},
      {CacheKind::kPods,
       [&cache](const std::string& ns, const std::string& name) {
         std::vector<ObjectKey> keys;
         for (std::string& sandbox : cache.SandboxesNamingPod(ns, name))
           keys.push_back({ns, std::move(sandbox)});
         return keys;
       }},
  };
}

std::unique_ptr<SandboxController> SandboxController::WithInformers(
    kube::ApiClient& client, journal::JournalWriter& journal, SandboxControllerOptions options,
    Metrics* metrics) {
  CacheScope scope{options.namespaces, options.selector, options.sandbox_version, options.informer,
                   options.boundary_port};
  if (!scope.informer.time) scope.informer.time = &TimeOf(options);
  auto cache = std::make_unique<InformerCache>(client, scope);
  // As many Event senders as workers: Events keep pace with the transitions
  // without ever holding one up (docs/design.md#events).
  auto events = options.create_events
                    ? std::make_unique<EventRecorder>(
                          client, options.instance, TimeOf(options), std::max(1, options.workers),
                          EventRecorder::kDefaultCapacity, metrics, options.write_fence)
                    : nullptr;
  const ClusterCache& view = *cache;
  EventSink* sink = events.get();
  return std::unique_ptr<SandboxController>(
      new SandboxController(std::move(cache), view, client, journal, std::move(options), metrics,
                            std::move(events), sink));
}

std::unique_ptr<SandboxController> SandboxController::OverCache(
    const ClusterCache& cache, kube::ApiClient& client, journal::JournalWriter& journal,
    SandboxControllerOptions options, Metrics* metrics, EventSink* events) {
  return std::unique_ptr<SandboxController>(new SandboxController(
      nullptr, cache, client, journal, std::move(options), metrics, nullptr, events));
}

SandboxController::SandboxController(std::unique_ptr<InformerCache> own_cache,
                                     const ClusterCache& cache, kube::ApiClient& client,
                                     journal::JournalWriter& journal,
                                     SandboxControllerOptions options, Metrics* metrics,
                                     std::unique_ptr<EventRecorder> own_events, EventSink* events)
    : own_cache_(std::move(own_cache)),
      cache_(cache),
      client_(client),
      options_(std::move(options)),
      time_(TimeOf(options_)),
      own_events_(std::move(own_events)),
      reconciler_(cache_, client, journal, time_, events, metrics, ReconcilerOptionsFrom(options_)),
      coverage_(options_.namespaces, NamespaceExists(client)),
      loop_(cache_, reconciler_, SandboxMappers(cache_), LoopOptions(), metrics) {
  if (own_cache_) {
    own_cache_->Subscribe([this](CacheKind kind, const std::string& ns, const std::string& name) {
      loop_.OnChange(kind, ns, name);
      // Said at once, not at the next resync; before the sync a half-filled
      // cache would look like missing policies.
      if (kind == CacheKind::kPolicies && name == domain::kSupervisorPolicyName && loop_.Synced())
        supervisor_.Update(cache_);
    });
  }
}

Controller::Options SandboxController::LoopOptions() {
  Controller::Options o;
  o.resync = options_.resync;
  o.workers = options_.workers;
  o.retry_base = options_.retry_base;
  o.retry_max = options_.retry_max;
  o.time = &time_;
  o.resync_keys = [this] { return cache_.SandboxKeys(""); };  // every namespace watched
  o.on_synced = [this] {
    log::Info("caches synced")
        .Str("scope", ScopeText(options_.namespaces))
        .Str("caches", CacheSummary(cache_, options_.namespaces));
    coverage_.Update(cache_);
    supervisor_.Update(cache_);
    LogUnevaluatedPolicyApis();
  };
  o.on_resync = [this] {
    coverage_.Update(cache_);
    supervisor_.Update(cache_);
  };
  return o;
}

void SandboxController::LogUnevaluatedPolicyApis() {
  if (!options_.report_policy_apis) return;
  const auto groups = client_.ServedGroups();
  if (!groups.ok()) {
    log::Warn("cannot tell which other policy APIs the cluster serves")
        .Error(groups.status().message());
    return;
  }
  const std::vector<std::string> unevaluated = domain::UnevaluatedPolicyApis(*groups);
  if (unevaluated.empty()) return;
  std::string list;
  for (const std::string& g : unevaluated) list += (list.empty() ? "" : ", ") + g;
  log::Warn("the cluster serves policy APIs fencekeeper does not evaluate")
      .Str("apis", list)
      .Str("why", "their policies can open a boundary the effective fence does not see");
}

SandboxController::~SandboxController() { Stop(); }

void SandboxController::Start() {
  loop_.Start();  // the pending intents' keys first, then whatever the informers announce
  if (own_cache_) own_cache_->Start();
}

void SandboxController::Stop() {
  loop_.Stop();
  if (own_cache_) own_cache_->Stop();
  if (own_events_) own_events_->Stop();
}

const std::vector<std::unique_ptr<kube::Informer>>& SandboxController::informers() const {
  static const std::vector<std::unique_ptr<kube::Informer>> kNone;
  return own_cache_ ? own_cache_->informers() : kNone;
}

std::vector<ReadinessCheck> SandboxController::CacheChecks() const {
  if (own_cache_) return own_cache_->Checks();
  const bool synced = Synced();
  return {{"caches", synced, synced ? "" : "not synced"}};
}

SandboxControllerStats SandboxController::stats() const {
  SandboxControllerStats s;
  static_cast<ReconcilerStats&>(s) = reconciler_.stats();
  s.resync_passes = loop_.resync_passes();
  if (own_events_) {
    const EventStats e = own_events_->stats();
    s.events_created = e.created;
    s.events_failed = e.failed + e.dropped;
  }
  return s;
}

}  // namespace fk::reconciler
