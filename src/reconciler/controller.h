// The controller (docs/architecture.md#from-a-watch-event-to-a-patch, after
// controller-runtime and kube-runtime): the caches' change handlers and a periodic resync feed a
// work queue of sandbox keys; `workers` threads each take one key at a time (processNextWorkItem) —
// never the same key at once — and hand it to the SandboxReconciler, then
// requeue it as the reconciler asks (done,
// retry with per-key backoff, or after a delay, e.g. when an admitting
// window ends). At start every key with a pending intent is queued, so
// intents left by a crash are settled without holding up other sandboxes.
// In steady state it sends nothing but its watches and appends nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/objects.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/coverage.h"
#include "reconciler/event_recorder.h"
#include "reconciler/metrics.h"
#include "reconciler/sandbox_reconciler.h"
#include "reconciler/work_queue.h"

namespace fk::reconciler {

struct ControllerOptions {
  std::vector<std::string> namespaces;  // empty: all namespaces
  std::string selector = "openshell.ai/managed-by=openshell";
  std::chrono::milliseconds resync{30000};
  // Worker threads; the queue never hands one key to two of them.
  int workers = 1;
  int boundary_port = domain::kDefaultBoundaryPort;
  std::string instance = "fencekeeper";  // reportingInstance of Events
  std::string sandbox_version = "v1beta1";
  bool create_events = true;
  kube::InformerOptions informer;  // backoff settings; namespace/selector are set per informer
  // The per-key backoff of a failing key: 50 ms doubling up to 5 minutes
  // (docs/design.md#growth-with-changes-not-time: a PATCH that keeps being
  // refused costs a few rows per 5 minutes at most, never one per second).
  std::chrono::milliseconds retry_base{50};
  std::chrono::milliseconds retry_max{300000};
  TimeSource* time = nullptr;  // the real clock by default
  // The leadership fence (LeaderElector::WriteFenceUntil); null: always allowed.
  std::function<std::optional<MonoTime>()> write_fence;
  // This process's writer id, carried by every intent (ReconcilerOptions::writer_id).
  std::string writer_id;
};

// What the reconciler counted, plus the loop's own counters.
struct ControllerStats : ReconcilerStats {
  int resync_passes = 0;
  int events_created = 0;
  int events_failed = 0;  // given up or dropped
};

class Controller {
 public:
  // Watches the cluster through informers of its own; Events in the background.
  Controller(kube::ApiClient& client, journal::Journal& journal, ControllerOptions options,
             Metrics* metrics = nullptr);
  // Over a cache someone else feeds through the On* handlers (the
  // simulation); `events` may be null.
  Controller(const ClusterCache& cache, kube::ApiClient& client, journal::Journal& journal,
             ControllerOptions options, Metrics* metrics, EventSink* events);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Queues the pending intents' keys, starts the informers (if its own), the
  // workers and the resync loop.
  void Start();
  // Stops the workers after their current step, then the informers and Events.
  // Idempotent. It also stops `client` (interrupting calls in flight), so
  // every controller gets a client of its own.
  void Stop();

  // Change handlers: what the caches call.
  void OnChange(CacheKind kind, const std::string& ns, const std::string& name);
  // A resync pass, from the caches: no API request; a key in backoff (or
  // waiting for its requested delay) is not queued sooner (WorkQueue::Resync).
  void EnqueueAll();
  void EnqueuePendingIntents();  // every key the journal holds an unsettled intent for
  // controller-runtime's processNextWorkItem: takes one key (waiting for one
  // if `block`), reconciles it, requeues it as asked. False when no key was
  // due (non-blocking) or the queue is shut down.
  bool ProcessNextWorkItem(bool block);
  WorkQueue& queue() { return queue_; }

  bool Synced() const;
  // One readiness check per informer ("informer sandboxes/ns-a"), or one for
  // an injected cache.
  std::vector<ReadinessCheck> CacheChecks() const;
  // Which watched namespaces fencekeeper can protect, once synced (never unready).
  std::vector<ReadinessCheck> CoverageChecks() const;
  // Watched namespaces per coverage state, for the gauge.
  std::map<std::string, int> CoverageCounts() const;
  bool JournalWritable() const { return reconciler_.JournalWritable(); }
  ControllerStats stats() const;
  std::map<std::string, int> VerdictCounts() const;
  // The informers (empty over an external cache), for their metrics.
  const std::vector<std::unique_ptr<kube::Informer>>& informers() const;

 private:
  void Worker(bool first);
  void Resyncer(MonoTime first);  // a pass at `first` and every `resync` after it
  void EnqueueNamespace(const std::string& ns);
  void OnPod(const std::string& ns, const std::string& name);
  std::string VerdictOf(const std::string& ns, const std::string& name) const;
  void UpdateVerdicts();  // a full recount, once at start
  // After a pass: `key`'s verdict now ("" when its sandbox is gone).
  void CountVerdict(const std::string& key, const std::string& verdict);
  bool Stopping() const;

  std::unique_ptr<InformerCache> own_cache_;
  const ClusterCache& cache_;
  kube::ApiClient& client_;
  journal::Journal& journal_;
  ControllerOptions options_;
  Metrics* metrics_;
  TimeSource& time_;
  std::unique_ptr<EventRecorder> own_events_;
  EventSink* events_;
  SandboxReconciler reconciler_;
  WorkQueue queue_;
  CoverageWatch coverage_;
  std::vector<std::thread> workers_;
  std::thread resyncer_;
  mutable std::mutex mu_;
  Interrupt stop_;
  bool stopping_ = false;
  bool started_ = false;
  int resync_passes_ = 0;
  std::map<std::string, int> verdicts_;
  std::map<std::string, std::string> counted_;  // key -> the verdict counted for it
};

}  // namespace fk::reconciler
