// The controller loop (docs/architecture.md#from-a-watch-event-to-a-patch,
// after controller-runtime's and kube-runtime's): the cache's change handlers
// and a periodic resync feed a work queue of object keys; `workers` threads
// each take one key at a time (ProcessNextWorkItem) — never the same key at
// once — hand it to the Reconciler, and requeue it as the reconciler asks
// (done, retry with per-key backoff, or after a delay). Which keys a change
// concerns is the mappers' business; what a key means is the reconciler's.
// Nothing here knows about sandboxes, journals or Events: the sandbox
// controller (sandbox_controller.h) wires those in.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/metrics.h"
#include "reconciler/reconciler.h"
#include "reconciler/work_queue.h"

namespace fk::reconciler {

class Controller {
 public:
  struct Options {
    std::chrono::milliseconds resync{30000};
    int workers = 1;  // the queue never hands one key to two of them
    // A failing key's backoff: 50 ms doubling up to 5 minutes
    // (docs/design.md#growth-with-changes-not-time: a PATCH that keeps being
    // refused costs a few rows per 5 minutes at most, never one per second).
    std::chrono::milliseconds retry_base{50};
    std::chrono::milliseconds retry_max{300000};
    TimeSource* time = nullptr;  // the real clock by default
    // Once, when the caches have synced (on the first worker), and after each
    // resync pass: moments to look at the whole cache.
    std::function<void()> on_synced;
    std::function<void()> on_resync;
    // The keys a resync pass queues: every cached object of the kind the
    // reconciler owns (kube-runtime resyncs its reflector's store). Unset:
    // a resync queues nothing.
    std::function<std::vector<ObjectKey>()> resync_keys;
  };

  // `mappers[kind]` says which keys a change of that kind concerns; a kind
  // without a mapper is ignored. `metrics` may be null.
  Controller(const ClusterCache& cache, Reconciler& reconciler,
             std::map<CacheKind, KeyMapper> mappers, Options options, Metrics* metrics);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Queues the reconciler's start keys, starts the workers and the resync loop.
  void Start();
  // Stops the workers after their current step (the reconciler is asked to
  // cut its calls short), then the resync loop. Idempotent.
  void Stop();

  // The change handler: what the cache calls.
  void OnChange(CacheKind kind, const std::string& ns, const std::string& name);
  // A resync pass, from the cache: no API request; a key in backoff (or
  // waiting for its requested delay) is not queued sooner (WorkQueue::Resync).
  void EnqueueAll();
  void EnqueueKeysAtStart();  // Reconciler::KeysAtStart
  // controller-runtime's processNextWorkItem: takes one key (waiting for one
  // if `block`), reconciles it, requeues it as asked. False when no key was
  // due (non-blocking) or the queue is shut down.
  bool ProcessNextWorkItem(bool block);
  WorkQueue& queue() { return queue_; }
  bool Synced() const { return cache_.Synced(); }
  int resync_passes() const;

 private:
  void Worker(bool first);
  void Resyncer(MonoTime first);  // a pass at `first`, then a period after each
  // Reconcile, with an escaped exception turned into a retried error.
  ReconcileResult GuardedReconcile(const ObjectKey& key);
  void Requeue(const ObjectKey& key, const ReconcileResult& result);
  bool Stopping() const;

  const ClusterCache& cache_;
  Reconciler& reconciler_;
  const std::map<CacheKind, KeyMapper> mappers_;
  Options options_;
  Metrics* metrics_;
  TimeSource& time_;
  WorkQueue queue_;
  std::vector<std::thread> workers_;
  std::thread resyncer_;
  mutable std::mutex mu_;
  Interrupt stop_;
  bool stopping_ = false;
  bool started_ = false;
  int resync_passes_ = 0;
};

}  // namespace fk::reconciler
