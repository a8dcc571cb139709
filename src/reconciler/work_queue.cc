#include "reconciler/work_queue.h"

#include <algorithm>

#include "common/backoff.h"

namespace fk::reconciler {

WorkQueue::WorkQueue(TimeSource& time, std::chrono::milliseconds base_delay,
                     std::chrono::milliseconds max_delay)
    : time_(time), base_delay_(base_delay), max_delay_(max_delay) {}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard lock(mu_);
  if (shutdown_ || dirty_.contains(key)) return;
  dirty_.insert(key);
  if (processing_.contains(key)) return;  // queued again by Done
  queue_.push_back(key);
  cv_.notify_one();
}

void WorkQueue::AddAfter(const std::string& key, std::chrono::milliseconds delay) {
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
  cv_.notify_one();
}

void WorkQueue::AddRateLimited(const std::string& key, std::optional<int64_t> retry_after_seconds) {
  std::chrono::milliseconds delay;
  {
    std::lock_guard lock(mu_);
    delay = ExponentialDelay(base_delay_, failures_[key]++, max_delay_);
  }
  if (retry_after_seconds) delay = std::max(delay, RetryAfterDelay(*retry_after_seconds));
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  failures_.erase(key);
}

void WorkQueue::PromoteDue() {
  const auto now = time_.MonotonicNow();
  while (!delayed_.empty() && delayed_.begin()->first <= now) {
    const std::string key = delayed_.begin()->second;
    delayed_.erase(delayed_.begin());
    if (dirty_.contains(key)) continue;
    dirty_.insert(key);
    if (!processing_.contains(key)) queue_.push_back(key);
  }
}

std::optional<std::string> WorkQueue::Get() {
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

std::optional<std::string> WorkQueue::TryGet() {
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

std::string WorkQueue::TakeFront() {
  std::string key = queue_.front();
  queue_.pop_front();
  dirty_.erase(key);
  processing_.insert(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  if (dirty_.contains(key)) {
    queue_.push_back(key);
    cv_.notify_one();
  }
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

int WorkQueue::Failures(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

}  // namespace fk::reconciler
