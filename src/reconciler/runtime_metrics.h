// controller-runtime's and client-go's metric families under their own names
// and label keys (controller_runtime_*, workqueue_*, rest_client_*,
// leader_election_master_status), beside fencekeeper's prefixed ones, so
// dashboards and alerts written for any controller-runtime manager work on
// fencekeeper unchanged. Metrics (metrics.h) feeds both; this header pulls in
// prometheus-cpp and is included by metrics.cc only. Thread-safe.
#pragma once

#include <prometheus/registry.h>

#include <mutex>
#include <set>
#include <string>

#include "reconciler/metric_families.h"

namespace fk::reconciler {

class RuntimeFamilies {
 public:
  // `controller`: the value of every controller and name label.
  RuntimeFamilies(prometheus::Registry& registry, const std::string& controller);

  // result: success, error, requeue or requeue_after, as controller-runtime's.
  void Reconcile(const std::string& result, double seconds);
  void ReconcilePanic() { panics_.Increment(); }
  void ActiveWorkers(int delta) { active_workers_.Increment(delta); }
  void MaxConcurrentReconciles(int workers) { max_concurrent_.Set(workers); }

  void QueueAdd() { adds_.Increment(); }
  void QueueRetry() { retries_.Increment(); }
  void QueueDepth(size_t depth) { depth_.Set(static_cast<double>(depth)); }
  void QueueWait(double seconds) { queue_duration_.Observe(seconds); }
  void QueueWork(double seconds) { work_duration_.Observe(seconds); }
  void QueueUnfinished(double total_seconds, double longest_seconds) {
    unfinished_.Set(total_seconds);
    longest_.Set(longest_seconds);
  }

  // method is the HTTP method (a watch is a GET, as client-go counts it);
  // code 0 (no answer) is client-go's "<error>". Not timed when `timed` is false.
  void RestRequest(const std::string& method, int code, double seconds, const std::string& host,
                   bool timed);
  void LeaderStatus(const std::string& lease, bool leading);

 private:
  // The first request to `host` creates its usual method x code series at zero.
  void KnowHost(const std::string& host);

  const std::string controller_;
  families::Family<families::Counter>& reconcile_total_;
  families::Counter& reconcile_errors_;
  families::Counter& panics_;
  families::Histogram& reconcile_time_;
  families::Gauge& active_workers_;
  families::Gauge& max_concurrent_;
  families::Gauge& depth_;
  families::Counter& adds_;
  families::Histogram& queue_duration_;
  families::Histogram& work_duration_;
  families::Counter& retries_;
  families::Gauge& unfinished_;
  families::Gauge& longest_;
  families::Family<families::Counter>& rest_requests_;
  families::Family<families::Histogram>& rest_duration_;
  families::Family<families::Gauge>& master_status_;
  std::mutex hosts_mu_;
  std::set<std::string> hosts_;  // under hosts_mu_
};

}  // namespace fk::reconciler
