// A work queue of object keys (namespace, name), modelled on client-go's:
// a key queued several times before it is taken is processed once; a key is
// never handed to two workers at once (re-adding it while it is processed
// queues it again for after Done); failed keys come back after a per-key
// exponential backoff, capped (5 minutes by default: a key that keeps failing
// is retried at least that often, and costs no more than that). With
// Metrics it reports what client-go's workqueue metrics report: depth (the
// keys waiting, a key re-added while it is worked on included), adds (a key
// added while already waiting is no add), retries, time queued, time worked,
// and the work still in progress (computed when scraped).
//
// Keys are packed (common/namespaced_name.h): at a resync every sandbox's
// key is here at once, and an std::string name longer than 15 characters
// (as OpenShell's are) would be a heap string in each copy.
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
#include "common/namespaced_name.h"
#include "reconciler/metrics.h"
#include "reconciler/reconciler.h"

namespace fk::reconciler {

class WorkQueue {
 public:
  explicit WorkQueue(TimeSource& time,
                     std::chrono::milliseconds base_delay = std::chrono::milliseconds(5),
                     std::chrono::milliseconds max_delay = std::chrono::seconds(300),
                     Metrics* metrics = nullptr);

  void Add(const ObjectKey& key);
  // A resync's Add: a key waiting to come back (after its backoff, or the
  // delay its last pass asked for) or being worked on is left alone, so a
  // resync never cuts a failing key's backoff short. A change uses Add.
  void Resync(const ObjectKey& key);
  void AddAfter(const ObjectKey& key, std::chrono::milliseconds delay);
  // Re-queues a failed key after its backoff (5ms, 10ms, 20ms, ... capped at
  // max_delay), or after the server's Retry-After if that is longer (itself
  // capped at kMaxRetryAfter, common/backoff.h).
  void AddRateLimited(const ObjectKey& key,
                      std::optional<int64_t> retry_after_seconds = std::nullopt);
  // Clears the key's failure count after a success.
  void Forget(const ObjectKey& key);
  // Blocks for the next key, or returns nullopt once shut down.
  std::optional<ObjectKey> Get();
  // The next key if one is due now, without blocking (the simulation's driver).
  std::optional<ObjectKey> TryGet();
  // When the earliest delayed key falls due (nullopt: none delayed).
  std::optional<MonoTime> NextDue() const;
  void Done(const ObjectKey& key);
  void ShutDown();

  size_t Depth() const;  // keys waiting (not counting delayed ones)
  // Reports the age of the keys being worked on now (total and oldest) to
  // the metrics; called when metrics are scraped.
  void ReportUnfinished() const;

 private:
  using Key = ObjectKey;

  void PromoteDue();             // under mu_
  void Enqueue(const Key& key);  // under mu_: marks it dirty and queues it
  ObjectKey TakeFront();         // under mu_, queue_ not empty
  double SecondsSince(MonoTime t) const;

  TimeSource& time_;
  const std::chrono::milliseconds base_delay_, max_delay_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Key> queue_;
  // Queued and not yet taken, with since when. One node per key: at a
  // resync every sandbox is here at once.
  std::map<Key, MonoTime> dirty_;
  std::set<Key> processing_;  // taken and not yet Done
  std::multimap<MonoTime, Key> delayed_;
  std::set<Key> waiting_;  // the keys in delayed_
  std::map<Key, int> failures_;
  Metrics* const metrics_;
  std::map<Key, MonoTime> taken_at_;  // keys being processed: since when
  bool shutdown_ = false;
};

}  // namespace fk::reconciler
