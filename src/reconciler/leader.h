// Leader election on a coordination.k8s.io/v1 Lease, following client-go's
// algorithm with controller-runtime's timing (lease 15s, renew deadline 10s,
// retry 2s): a lease is free when its holder is empty or has not renewed it
// for leaseDurationSeconds as measured on our own clock since we last saw it
// change; updates carry metadata.resourceVersion, so two candidates cannot
// both win. Leadership changes are journaled.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "journal/journal.h"
#include "kube/client.h"

namespace fk::reconciler {

struct LeaderOptions {
  std::string name = "fencekeeper";
  std::string ns = "default";
  std::string identity;
  std::chrono::milliseconds lease_duration{15000};
  std::chrono::milliseconds renew_deadline{10000};
  std::chrono::milliseconds retry_period{2000};
  TimeSource* time = nullptr;  // the real clock by default
};

class LeaderElector {
 public:
  // `journal` may be null; otherwise it is written only while no controller runs.
  LeaderElector(kube::ApiClient& client, LeaderOptions options, journal::Journal* journal);

  // Until should_stop(): acquire the lease, call on_started, renew it; if it
  // is lost, call on_stopped at once and go back to acquiring. On stop while
  // leading: on_stopped, then release the lease. `wait(d)` sleeps up to d and
  // returns false when stopping.
  void Run(const std::function<void()>& on_started, const std::function<void()>& on_stopped,
           const std::function<bool()>& should_stop, const std::function<bool(std::chrono::milliseconds)>& wait);

  // One acquire-or-renew attempt; true if we hold the lease afterwards.
  bool TryAcquireOrRenew();
  void Release();

 private:
  void Journal(const std::string& state);

  kube::ApiClient& client_;
  LeaderOptions options_;
  journal::Journal* journal_;
  std::string observed_record_;
  MonoTime observed_at_{};
  TimeSource& time_;
};

}  // namespace fk::reconciler
