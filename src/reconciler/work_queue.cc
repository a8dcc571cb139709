#include "reconciler/work_queue.h"

#include <algorithm>

#include "common/backoff.h"

namespace fk::reconciler {

WorkQueue::WorkQueue(TimeSource& time, std::chrono::milliseconds base_delay,
                     std::chrono::milliseconds max_delay, Metrics* metrics)
    : time_(time), base_delay_(base_delay), max_delay_(max_delay), metrics_(metrics) {}

void WorkQueue::Add(const ObjectKey& key) {
  std::lock_guard lock(mu_);
  if (!shutdown_) Enqueue(key);
}

void WorkQueue::Resync(const ObjectKey& key) {
  std::lock_guard lock(mu_);
  if (!shutdown_ && !waiting_.contains(key) && !processing_.contains(key)) Enqueue(key);
}

void WorkQueue::Enqueue(const Key& key) {
  if (!dirty_.emplace(key, time_.MonotonicNow()).second) return;
  if (metrics_) {
    metrics_->QueueAdd();
    metrics_->QueueDepth(dirty_.size());
  }
  if (processing_.contains(key)) return;  // queued again by Done
  queue_.push_back(key);
  cv_.notify_one();
}

double WorkQueue::SecondsSince(MonoTime t) const {
  return std::chrono::duration<double>(time_.MonotonicNow() - t).count();
}

void WorkQueue::AddAfter(const ObjectKey& key, std::chrono::milliseconds delay) {
  if (delay.count() <= 0) return Add(key);
  std::lock_guard lock(mu_);
  if (shutdown_) return;
  const auto at = time_.MonotonicNow() + delay;
  // Keep the earlier of two pending delays for the same key.
  for (auto it = delayed_.begin(); it != delayed_.end(); ++it) {
    if (it->second != key) continue;
    if (it->first <= at) return;
    delayed_.erase(it);
    break;
  }
  delayed_.emplace(at, key);
  waiting_.insert(key);
  cv_.notify_one();
}

void WorkQueue::AddRateLimited(const ObjectKey& key, std::optional<int64_t> retry_after_seconds) {
  std::chrono::milliseconds delay;
  {
    std::lock_guard lock(mu_);
    delay = ExponentialDelay(base_delay_, failures_[key]++, max_delay_);
  }
  if (metrics_) metrics_->QueueRetry();
  if (retry_after_seconds) delay = std::max(delay, RetryAfterDelay(*retry_after_seconds));
  AddAfter(key, delay);
}

void WorkQueue::Forget(const ObjectKey& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

void WorkQueue::PromoteDue() {
  const auto now = time_.MonotonicNow();
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    const Key key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    waiting_.erase(key);
    Enqueue(key);
  }
}

std::optional<ObjectKey> WorkQueue::Get() {
  std::unique_lock lock(mu_);
  for (;;) {
    if (shutdown_) return std::nullopt;
    PromoteDue();
    if (!queue_.empty()) break;
    if (delayed_.empty()) {
      cv_.wait(lock);
    } else {
      // Measured on the time source, waited on the real clock (a manual
      // source's driver uses TryGet instead).
      cv_.wait_for(lock, delayed_.begin()->first - time_.MonotonicNow());
    }
  }
  return TakeFront();
}

std::optional<ObjectKey> WorkQueue::TryGet() {
  std::lock_guard lock(mu_);
  if (shutdown_) return std::nullopt;
  PromoteDue();
  if (queue_.empty()) return std::nullopt;
  return TakeFront();
}

std::optional<MonoTime> WorkQueue::NextDue() const {
  std::lock_guard lock(mu_);
  if (delayed_.empty()) return std::nullopt;
  return delayed_.begin()->first;
}

ObjectKey WorkQueue::TakeFront() {
  Key key = queue_.front();
  queue_.pop_front();
  if (const auto queued = dirty_.find(key); queued != dirty_.end()) {
    if (metrics_) metrics_->QueueWait(SecondsSince(queued->second));
    dirty_.erase(queued);
  }
  processing_.insert(key);
  taken_at_[key] = time_.MonotonicNow();
  if (metrics_) metrics_->QueueDepth(dirty_.size());
  return key;
}

void WorkQueue::Done(const ObjectKey& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  if (const auto taken = taken_at_.find(key); taken != taken_at_.end()) {
    if (metrics_) metrics_->QueueWork(SecondsSince(taken->second));
    taken_at_.erase(taken);
  }
  if (dirty_.contains(key)) {  // re-added while it was worked on: already counted in the depth
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::ReportUnfinished() const {
  if (!metrics_) return;
  std::lock_guard lock(mu_);
  double total = 0, longest = 0;
  for (const auto& [key, since] : taken_at_) {
    const double age = SecondsSince(since);
    total += age;
    longest = std::max(longest, age);
  }
  metrics_->QueueUnfinished(total, longest);
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mu_);
  shutdown_ = true;
  cv_.notify_all();
}

size_t WorkQueue::Depth() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

}  // namespace fk::reconciler
