// Kubernetes Events for fail-closed transitions, off the transition path
// (docs/design.md#events): a suspension never waits for the Events endpoint. Each
// Event gets one attempt and at most one retry; the queue is bounded and a
// full queue drops (and counts) rather than grows. With a write fence (the
// leadership fence, as for PATCHes) an Event is sent only while it holds, and
// each request is bounded by it; an Event that finds it down stays queued
// until it holds again, and one still queued when the recorder stops (the
// term ended) is counted as dropped.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/clock.h"
#include "kube/client.h"
#include "reconciler/metrics.h"

namespace fk::reconciler {

struct FailClosedEvent {
  std::string ns, name, uid;
  domain::ApiVersion api_version = domain::ApiVersion::kV1beta1;  // the Sandbox API's
  std::string reason;  // fail-closed reason, e.g. fence-stale
  std::string note;    // why, for people
  int64_t seq = 0;     // the journal seq: the intent's, or the hold's `decided` row
  // kSuspended: fencekeeper suspended the sandbox (Warning FailClosedSuspended);
  // kHeld: it found the sandbox already suspended behind a stale fence and
  // holds it there (Normal FailClosedHeld, once per hold episode);
  // kWouldSuspend: enforcement is off for the namespace and it would have
  // suspended the sandbox (Warning FailClosedDryRun, once per episode).
  enum class Kind { kSuspended, kHeld, kWouldSuspend };
  Kind kind = Kind::kSuspended;
};

class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void Publish(FailClosedEvent event) = 0;
};

struct EventStats {
  int created = 0;  // or found already there (a lost answer)
  int failed = 0;   // gave up after the retry
  int dropped = 0;  // the queue was full, or still queued at Stop
  int fenced = 0;   // sends held back because the write fence was down
};

// Until when writes may be sent (LeaderElector::WriteFenceUntil); nullopt: not now.
using WriteFence = std::function<std::optional<MonoTime>()>;

class EventRecorder final : public EventSink {
 public:
  static constexpr size_t kDefaultCapacity = 10000;
  // `senders` threads drain the queue in the background; with none (the
  // deterministic simulation) SendQueued() drains it on the caller's thread.
  // `metrics` (optional) counts each Event created, failed or dropped.
  // `write_fence` null: always allowed.
  EventRecorder(kube::ApiClient& client, std::string instance, TimeSource& time, int senders = 1,
                size_t capacity = kDefaultCapacity, Metrics* metrics = nullptr,
                WriteFence write_fence = nullptr);
  ~EventRecorder() override;
  void Publish(FailClosedEvent event) override;
  // Sends what is queued, in order, until the queue is empty or the fence is down.
  void SendQueued();
  void Stop();
  EventStats stats() const;

 private:
  enum class Sent { kDone, kFenced };  // kFenced: nothing was sent, the fence is down
  void Run();
  Sent Send(const FailClosedEvent& e);
  // The Event's body under a new unique name.
  std::string Body(const FailClosedEvent& e);
  kube::ApiResult Post(const std::string& path, const std::string& body, MonoTime until);
  std::optional<MonoTime> FenceUntil() const;
  void DropQueued();
  void Count(int EventStats::*field, const char* result);  // under mu_

  kube::ApiClient& client_;
  const std::string instance_;
  TimeSource& time_;
  const size_t capacity_;
  Metrics* const metrics_;
  const WriteFence write_fence_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<FailClosedEvent> queue_;
  bool stopping_ = false;
  EventStats stats_;
  uint64_t sequence_ = 0;
  std::vector<std::thread> threads_;
};

// What a FailClosedHeld Event's note ends with: how an operator gets the
// sandbox out of the hold (docs/operations.md#resuming-a-sandbox-under-the-new-fence).
// What a FailClosedDryRun Event's note ends with.
inline constexpr const char* kDryRunHint =
    "enforcement is off for this namespace (fencekeeper run --enforcement dry-run or "
    "--dry-run-namespace): nothing was sent, the sandbox keeps running";

inline constexpr const char* kResumeHint =
    "it stays suspended until it is resumed through OpenShell (openshell sandbox start), "
    "which re-admits it under the current fence";

// An Event's name: the sandbox name cut so that name and suffix fit in 253
// characters (a DNS subdomain, as the API server requires), then "." and the
// suffix that makes it unique.
std::string EventName(const std::string& sandbox, const std::string& suffix);

// The events.k8s.io/v1 Event body (docs/design.md#events).
std::string EventJson(const FailClosedEvent& e, const std::string& instance, WallTime now,
                      uint64_t unique);

}  // namespace fk::reconciler
