// Leader election on a coordination.k8s.io/v1 Lease, following client-go's
// algorithm with controller-runtime's timing (lease 15s, renew deadline 10s,
// retry 2s): a lease is free when its holder is empty or has not renewed it
// for leaseDurationSeconds as measured on our own clock since we last saw it
// change; updates carry metadata.resourceVersion, so two candidates cannot
// both win. Leadership changes are journaled.
//
// The write fence (docs/design.md#leadership-fence-and-write-deadline): MayWrite() holds only
// while the start of the last successful acquire or renew request plus the
// renew deadline lies in the future. Counting from the request's start, not
// its answer, keeps the fence inside the lease another candidate sees: it
// waits lease_duration (> renew_deadline) from when it saw our last renewal,
// which is after we started it. Every lease request is bounded by what
// remains of the renew deadline, so a hung API server cannot stretch it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "common/clock.h"
#include "common/status.h"
#include "journal/journal.h"
#include "kube/client.h"

namespace fk::reconciler {

class Metrics;

// "<hostname>_<random UUID v4>": unique per process even where every process
// is PID 1 (containers) and a restarted pod keeps its host name.
std::string LeaderIdentity(const std::string& hostname);

struct LeaderOptions {
  std::string name = "fencekeeper";
  std::string ns = "default";
  std::string identity;  // LeaderIdentity(hostname)
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  TimeSource* time = nullptr;  // the real clock by default
  // When it fires (SIGTERM), an acquire or renew request in flight is
  // abandoned at once. The release that follows is not: it is bounded by one
  // retry period, and it lets the next leader start without waiting out the
  // lease.
  Interrupt* cancel = nullptr;
  // leader_election_master_status{name}: 0 from construction, 1 from the
  // acquisition until leadership ends, as client-go's elector sets it.
  Metrics* metrics = nullptr;
};

// Why Run returned.
enum class LeaderExit {
  kStopped,  // should_stop (or wait said stop): work stopped, lease released if held
  kLost,     // no renewal succeeded within the renew deadline: work stopped; exit and start afresh
  kStartFailed,  // on_started failed: work stopped, lease released
};

const char* ToString(LeaderExit e);

class LeaderElector {
 public:
  // `journal` may be null; otherwise it is written only while no controller runs.
  LeaderElector(kube::ApiClient& client, LeaderOptions options, journal::Journal* journal);

  // Acquires the lease (trying every retry period until should_stop), calls
  // on_started, and renews every retry period until should_stop or the fence
  // lapses. on_started must return quickly: it starts the work
  // asynchronously; an error from it ends leadership (kStartFailed). The
  // renew deadline counts from the acquisition, not from on_started's return.
  // on_stopped runs whenever leadership ends after on_started was called,
  // before Run returns (and before the lease is released). Never re-acquires
  // after a loss: the caller exits and a fresh process competes again.
  // `wait(d)` sleeps up to d and returns false when stopping.
  LeaderExit Run(const std::function<Status()>& on_started, const std::function<void()>& on_stopped,
                 const std::function<bool()>& should_stop,
                 const std::function<bool(std::chrono::milliseconds)>& wait);

  // One acquire-or-renew attempt; true if we hold the lease afterwards. Its
  // requests are bounded by what remains of the renew deadline while the
  // fence holds, else by one retry period.
  bool TryAcquireOrRenew();
  // Gives the lease up (holder cleared) if we hold it; closes the fence first.
  void Release();

  // Whether writes are allowed now: the write fence. Thread-safe.
  bool MayWrite() const;
  // Until when writes are allowed (nullopt: not now). A write's request must
  // be on the wire by then, so its deadline is at most this. Thread-safe.
  std::optional<MonoTime> WriteFenceUntil() const;
  const std::string& identity() const { return options_.identity; }

 private:
  void Journal(const std::string& state);
  void MasterStatus(bool leading);  // the gauge, if options_.metrics
  // How long the fence still holds (<= 0: it does not).
  MonoTime::duration FenceRemaining() const;
  LeaderExit StopLeading(const std::function<void()>& on_stopped, LeaderExit why);
  // Creates the Lease, held by us; true if it was created (and the fence set).
  bool CreateLease(const kube::CallOptions& call, MonoTime started, const std::string& now,
                   int64_t duration_s);
  // Remembers the lease record just seen or written, and when, by our clock.
  void Observe(std::string record);
  // The fence holds for renew_deadline from `started`, when the winning call began.
  void Confirm(MonoTime started);

  kube::ApiClient& client_;
  LeaderOptions options_;
  journal::Journal* journal_;
  std::string observed_record_;
  MonoTime observed_at_{};
  TimeSource& time_;
  // The fence's end on time_'s monotonic clock (ticks since its epoch); the
  // minimum before the first success and after a release or a loss.
  std::atomic<MonoTime::rep> fence_until_;
};

}  // namespace fk::reconciler
