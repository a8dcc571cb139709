// fencekeeper's controller, assembled: the caches (informers of its own, or a
// cache someone else feeds), the Event recorder, the SandboxReconciler, the
// namespace coverage, and the generic Controller loop they plug into, with
// the mappers that say which sandboxes a pod or a policy change concerns.
// At start every key with a pending intent is queued first, so intents left
// by a crash are settled without holding up other sandboxes. In steady state
// it sends nothing but its watches and appends nothing.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "journal/journal_writer.h"
#include "kube/client.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/controller.h"
#include "reconciler/coverage.h"
#include "reconciler/event_recorder.h"
#include "reconciler/metrics.h"
#include "reconciler/sandbox_reconciler.h"
#include "reconciler/supervisor_policy.h"

namespace fk::reconciler {

struct SandboxControllerOptions {
  std::vector<std::string> namespaces;  // empty: all namespaces
  std::string selector = "openshell.ai/managed-by=openshell,openshell.ai/sandbox-id";
  std::chrono::milliseconds resync{30000};
  // Worker threads; the queue never hands one key to two of them.
  int workers = 1;
  int boundary_port = domain::kDefaultBoundaryPort;
  std::string instance = "fencekeeper";                               // reportingInstance of Events
  domain::ApiVersion sandbox_version = domain::ApiVersion::kV1beta1;  // discovered by the manager
  bool create_events = true;
  // Once synced, GET /apis and warn of the policy APIs it serves that
  // fencekeeper does not evaluate (one request a term).
  bool report_policy_apis = true;
  kube::InformerOptions informer;  // backoff settings; namespace/selector are set per informer
  // The per-key backoff of a failing key (Controller::Options).
  std::chrono::milliseconds retry_base{50};
  std::chrono::milliseconds retry_max{300000};
  TimeSource* time = nullptr;  // the real clock by default
  // The leadership fence (LeaderElector::WriteFenceUntil); null: always allowed.
  std::function<std::optional<MonoTime>()> write_fence;
  // This process's writer id, carried by every intent (ReconcilerOptions::writer_id).
  std::string writer_id;
  // When the queue drains after the journal recorded something
  // (ReconcilerOptions::return_freed_memory); null: never.
  std::function<void()> return_freed_memory;
  // Where enforcement is off (ReconcilerOptions::enforcement).
  domain::Enforcement enforcement;
};

// What the reconciler counted, plus the loop's own counters.
struct SandboxControllerStats : ReconcilerStats {
  int resync_passes = 0;
  int events_created = 0;
  int events_failed = 0;  // given up or dropped
};

// Which sandboxes a change of each cached kind concerns: a sandbox itself; a
// fence policy, every sandbox of its namespace; a pod, the sandboxes that
// name it (found through the cache's pod index, not by reading every sandbox).
std::map<CacheKind, KeyMapper> SandboxMappers(const ClusterCache& cache);

class SandboxController {
 public:
  // Watches the cluster through informers of its own; Events in the background.
  static std::unique_ptr<SandboxController> WithInformers(kube::ApiClient& client,
                                                          journal::JournalWriter& journal,
                                                          SandboxControllerOptions options,
                                                          Metrics* metrics = nullptr);
  // Over a cache someone else feeds through OnChange (the simulation);
  // `events` may be null.
  static std::unique_ptr<SandboxController> OverCache(const ClusterCache& cache,
                                                      kube::ApiClient& client,
                                                      journal::JournalWriter& journal,
                                                      SandboxControllerOptions options,
                                                      Metrics* metrics, EventSink* events);
  ~SandboxController();
  SandboxController(const SandboxController&) = delete;
  SandboxController& operator=(const SandboxController&) = delete;

  // Queues the pending intents' keys, starts the workers, the resync loop and
  // (if its own) the informers.
  void Start();
  // Stops the workers after their current step, then the informers and
  // Events. Idempotent. It also stops `client` (interrupting calls in
  // flight), so every controller gets a client of its own.
  void Stop();

  // The cache's change handler, a resync pass, the keys queued at start, one
  // work item: the loop's (Controller).
  void OnChange(CacheKind kind, const std::string& ns, const std::string& name) {
    loop_.OnChange(kind, ns, name);
  }
  void EnqueueAll() { loop_.EnqueueAll(); }
  void EnqueuePendingIntents() { loop_.EnqueueKeysAtStart(); }
  bool ProcessNextWorkItem(bool block) { return loop_.ProcessNextWorkItem(block); }
  WorkQueue& queue() { return loop_.queue(); }
  bool Synced() const { return loop_.Synced(); }

  // One readiness check per informer ("informer sandboxes/ns-a"), or one for
  // an injected cache.
  std::vector<ReadinessCheck> CacheChecks() const;
  // Which watched namespaces fencekeeper can protect, once synced (never unready).
  std::vector<ReadinessCheck> CoverageChecks() const { return coverage_.Checks(); }
  // Watched namespaces per coverage state, for the gauge.
  std::map<std::string, int> CoverageCounts() const { return coverage_.Counts(); }
  // Each fenced namespace's supervisor policy, when missing or altered (never unready).
  std::vector<ReadinessCheck> SupervisorPolicyChecks() const { return supervisor_.Checks(); }
  std::map<std::string, int> SupervisorPolicyCounts() const { return supervisor_.Counts(); }
  bool JournalWritable() const { return reconciler_.JournalWritable(); }
  SandboxControllerStats stats() const;
  // The informers (empty over an external cache), for their metrics.
  const std::vector<std::unique_ptr<kube::Informer>>& informers() const;

 private:
  SandboxController(std::unique_ptr<InformerCache> own_cache, const ClusterCache& cache,
                    kube::ApiClient& client, journal::JournalWriter& journal,
                    SandboxControllerOptions options, Metrics* metrics,
                    std::unique_ptr<EventRecorder> own_events, EventSink* events);
  Controller::Options LoopOptions();
  // Once synced: the policy APIs the cluster serves that fencekeeper does
  // not evaluate (docs/design.md#what-fencekeeper-cannot-see).
  void LogUnevaluatedPolicyApis();

  std::unique_ptr<InformerCache> own_cache_;
  const ClusterCache& cache_;
  kube::ApiClient& client_;
  const SandboxControllerOptions options_;
  TimeSource& time_;
  std::unique_ptr<EventRecorder> own_events_;
  SandboxReconciler reconciler_;
  CoverageWatch coverage_;
  SupervisorPolicyWatch supervisor_;
  Controller loop_;
};

}  // namespace fk::reconciler
