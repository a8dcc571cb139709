// A work queue of sandbox keys ("namespace/name"), modelled on client-go's:
// a key queued several times before it is taken is processed once; a key is
// never handed to two workers at once (re-adding it while it is processed
// queues it again for after Done); failed keys come back after a per-key
// exponential backoff, capped (5 minutes by default: a key that keeps failing
// is retried at least that often, and costs no more than that). With
// Metrics it reports what client-go's workqueue metrics report: depth (the
// keys waiting, a key re-added while it is worked on included), adds (a key
// added while already waiting is no add), retries, time queued, time worked,
// and the work still in progress (computed when scraped).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "common/clock.h"
#include "reconciler/metrics.h"

namespace fk::reconciler {

class WorkQueue {
 public:
  explicit WorkQueue(TimeSource& time,
                     std::chrono::milliseconds base_delay = std::chrono::milliseconds(5),
                     std::chrono::milliseconds max_delay = std::chrono::seconds(300),
                     Metrics* metrics = nullptr);

  void Add(const std::string& key);
  // A resync's Add: a key waiting to come back (after its backoff, or the
  // delay its last pass asked for) or being worked on is left alone, so a
  // resync never cuts a failing key's backoff short. A change uses Add.
  void Resync(const std::string& key);
  void AddAfter(const std::string& key, std::chrono::milliseconds delay);
  // Re-queues a failed key after its backoff (5ms, 10ms, 20ms, ... capped at
  // max_delay), or after the server's Retry-After if that is longer (itself
  // capped at kMaxRetryAfter, common/backoff.h).
  void AddRateLimited(const std::string& key,
                      std::optional<int64_t> retry_after_seconds = std::nullopt);
  // Clears the key's failure count after a success.
  void Forget(const std::string& key);
  // Blocks for the next key, or returns nullopt once shut down.
  std::optional<std::string> Get();
  // The next key if one is due now, without blocking (the simulation's driver).
  std::optional<std::string> TryGet();
  // When the earliest delayed key falls due (nullopt: none delayed).
  std::optional<MonoTime> NextDue() const;
  void Done(const std::string& key);
  void ShutDown();

  size_t Depth() const;  // keys waiting (not counting delayed ones)
  int Failures(const std::string& key) const;
  // Reports the age of the keys being worked on now (total and oldest) to
  // the metrics; called when metrics are scraped.
  void ReportUnfinished() const;

 private:
  void PromoteDue();                     // under mu_
  void Enqueue(const std::string& key);  // under mu_: marks it dirty and queues it
  std::string TakeFront();               // under mu_, queue_ not empty
  double SecondsSince(MonoTime t) const;

  TimeSource& time_;
  const std::chrono::milliseconds base_delay_, max_delay_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  std::set<std::string> dirty_;       // queued and not yet taken
  std::set<std::string> processing_;  // taken and not yet Done
  std::multimap<MonoTime, std::string> delayed_;
  std::set<std::string> waiting_;  // the keys in delayed_
  std::map<std::string, int> failures_;
  Metrics* const metrics_;
  std::map<std::string, MonoTime> queued_at_;  // dirty keys: since when
  std::map<std::string, MonoTime> taken_at_;   // keys being processed: since when
  bool shutdown_ = false;
};

}  // namespace fk::reconciler
