#include "reconciler/controller.h"

#include <exception>

#include "common/log.h"

namespace fk::reconciler {
namespace {

TimeSource& TimeOf(const Controller::Options& o) {
  return o.time ? *o.time : RealTimeSource::Instance();
}

}  // namespace

Controller::Controller(const ClusterCache& cache, Reconciler& reconciler,
                       std::map<CacheKind, KeyMapper> mappers, Options options, Metrics* metrics)
    : cache_(cache),
      reconciler_(reconciler),
      mappers_(std::move(mappers)),
      options_(std::move(options)),
      metrics_(metrics),
      time_(TimeOf(options_)),
      queue_(time_, options_.retry_base, options_.retry_max, metrics_) {
  if (metrics_) metrics_->MaxConcurrentReconciles(std::max(1, options_.workers));
}

Controller::~Controller() { Stop(); }

bool Controller::Stopping() const {
  std::lock_guard lock(mu_);
  return stopping_;
}

int Controller::resync_passes() const {
  std::lock_guard lock(mu_);
  return resync_passes_;
}

void Controller::OnChange(CacheKind kind, const std::string& ns, const std::string& name) {
  auto it = mappers_.find(kind);
  if (it == mappers_.end()) return;
  for (const ObjectKey& key : it->second(ns, name)) queue_.Add(key);
}

void Controller::EnqueueAll() {
  if (!options_.resync_keys) return;
  for (const ObjectKey& key : options_.resync_keys()) queue_.Resync(key);
}

void Controller::EnqueueKeysAtStart() {
  for (const ObjectKey& key : reconciler_.KeysAtStart()) queue_.Add(key);
}

void Controller::Start() {
  {
    std::lock_guard lock(mu_);
    if (started_) return;
    started_ = true;
  }
  EnqueueKeysAtStart();
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
  reconciler_.Cancel();  // each worker finishes its step promptly
  for (auto& w : workers_) w.join();
  workers_.clear();
  if (resyncer_.joinable()) resyncer_.join();
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
    EnqueueAll();  // every cached object again, from the cache: no API request
    if (options_.on_resync) options_.on_resync();
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
  if (first && options_.on_synced) options_.on_synced();
  while (ProcessNextWorkItem(/*block=*/true)) {
  }
}

bool Controller::ProcessNextWorkItem(bool block) {
  auto key = block ? queue_.Get() : queue_.TryGet();
  if (!key) return false;
  if (metrics_) metrics_->ActiveWorkers(+1);
  const MonoTime started = time_.MonotonicNow();
  const ReconcileResult result = GuardedReconcile(*key);
  if (metrics_)
    metrics_->Reconcile(MetricLabel(result.next),
                        std::chrono::duration<double>(time_.MonotonicNow() - started).count());
  Requeue(*key, result);
  queue_.Done(*key);
  if (metrics_) metrics_->ActiveWorkers(-1);
  if (queue_.Depth() == 0) reconciler_.Idle();
  return true;
}

ReconcileResult Controller::GuardedReconcile(const ObjectKey& key) {
  // An exception that escapes a pass (a bug, an allocation that failed) must
  // not end the worker thread and with it the process: every other sandbox
  // would go unfenced until a restart. The pass counts as an error and the
  // key comes back with backoff; what it had journaled is write-ahead, so
  // the retry finds an unsent intent and settles it as after a crash.
  std::string what;
  try {
    return reconciler_.Reconcile(key);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "an exception of unknown type";
  }
  log::Error("reconcile threw: retried with backoff")
      .Namespace(key.ns.str())
      .Sandbox(key.name.str())
      .Error(what);
  if (metrics_) metrics_->ReconcilePanic();
  return ReconcileResult::Retry();
}

void Controller::Requeue(const ObjectKey& key, const ReconcileResult& result) {
  switch (result.next) {
    case ReconcileResult::Next::kRetry:
      if (!Stopping()) queue_.AddRateLimited(key, result.retry_after_seconds);
      break;
    case ReconcileResult::Next::kAfter:
      queue_.Forget(key);
      queue_.AddAfter(key, result.after);
      break;
    case ReconcileResult::Next::kDone:
      queue_.Forget(key);
      break;
  }
}

}  // namespace fk::reconciler
