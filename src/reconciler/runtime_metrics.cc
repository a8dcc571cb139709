#include "reconciler/runtime_metrics.h"

#include <vector>

namespace fk::reconciler {
namespace {

using namespace families;  // NOLINT(google-build-using-namespace): the builders, in this file only

// The methods the client sends and the codes worth a series from the start:
// success, no answer, conflict, throttled, server error.
const std::vector<std::string> kMethods{"GET", "PATCH", "POST", "PUT"};
const std::vector<std::string> kCodes{"200", "201", "<error>", "409", "429", "500"};

std::string CodeLabel(int code) { return code == 0 ? "<error>" : std::to_string(code); }

}  // namespace

RuntimeFamilies::RuntimeFamilies(prometheus::Registry& r, const std::string& controller)
    : controller_(controller),
      reconcile_total_(Counters(r, "controller_runtime_reconcile_total",
                                "Total number of reconciliations per controller")),
      reconcile_errors_(Counters(r, "controller_runtime_reconcile_errors_total",
                                 "Total number of reconciliation errors per controller")
                            .Add({{"controller", controller}})),
      panics_(Counters(r, "controller_runtime_reconcile_panics_total",
                       "Total number of reconciliation panics per controller")
                  .Add({{"controller", controller}})),
      reconcile_time_(Histograms(r, "controller_runtime_reconcile_time_seconds",
                                 "Length of time per reconciliation per controller")
                          .Add({{"controller", controller}}, kReconcileBuckets)),
      active_workers_(Gauges(r, "controller_runtime_active_workers",
                             "Number of currently used workers per controller")
                          .Add({{"controller", controller}})),
      max_concurrent_(Gauges(r, "controller_runtime_max_concurrent_reconciles",
                             "Maximum number of concurrent reconciles per controller")
                          .Add({{"controller", controller}})),
      depth_(
          Gauges(r, "workqueue_depth", "Current depth of workqueue").Add({{"name", controller}})),
      adds_(Counters(r, "workqueue_adds_total", "Total number of adds handled by workqueue")
                .Add({{"name", controller}})),
      queue_duration_(Histograms(r, "workqueue_queue_duration_seconds",
                                 "How long in seconds an item stays in workqueue before being "
                                 "requested")
                          .Add({{"name", controller}}, kQueueBuckets)),
      work_duration_(Histograms(r, "workqueue_work_duration_seconds",
                                "How long in seconds processing an item from workqueue takes")
                         .Add({{"name", controller}}, kQueueBuckets)),
      retries_(
          Counters(r, "workqueue_retries_total", "Total number of retries handled by workqueue")
              .Add({{"name", controller}})),
      unfinished_(Gauges(r, "workqueue_unfinished_work_seconds",
                         "How many seconds of work has been done that is in progress and hasn't "
                         "been observed by work_duration. Large values indicate stuck threads.")
                      .Add({{"name", controller}})),
      longest_(Gauges(r, "workqueue_longest_running_processor_seconds",
                      "How many seconds has the longest running processor for workqueue been "
                      "running.")
                   .Add({{"name", controller}})),
      rest_requests_(Counters(r, "rest_client_requests_total",
                              "Number of HTTP requests, partitioned by status code, method, and "
                              "host")),
      rest_duration_(Histograms(r, "rest_client_request_duration_seconds",
                                "Request latency in seconds. Broken down by verb, and host")),
      master_status_(Gauges(r, "leader_election_master_status",
                            "Gauge of if the reporting system is master of the relevant lease, 0 "
                            "indicates backup, 1 indicates master. 'name' is the string used to "
                            "identify the lease.")) {
  for (const char* result : {"success", "error", "requeue", "requeue_after"})
    reconcile_total_.Add({{"controller", controller}, {"result", result}});
}

void RuntimeFamilies::Reconcile(const std::string& result, double seconds) {
  reconcile_total_.Add({{"controller", controller_}, {"result", result}}).Increment();
  if (result == "error") reconcile_errors_.Increment();
  reconcile_time_.Observe(seconds);
}

void RuntimeFamilies::KnowHost(const std::string& host) {
  std::lock_guard lock(hosts_mu_);
  if (!hosts_.insert(host).second) return;
  for (const std::string& method : kMethods) {
    for (const std::string& code : kCodes)
      rest_requests_.Add({{"code", code}, {"method", method}, {"host", host}});
    rest_duration_.Add({{"verb", method}, {"host", host}}, kApiBuckets);
  }
}

void RuntimeFamilies::RestRequest(const std::string& method, int code, double seconds,
                                  const std::string& host, bool timed) {
  KnowHost(host);
  rest_requests_.Add({{"code", CodeLabel(code)}, {"method", method}, {"host", host}}).Increment();
  if (timed) rest_duration_.Add({{"verb", method}, {"host", host}}, kApiBuckets).Observe(seconds);
}

void RuntimeFamilies::LeaderStatus(const std::string& lease, bool leading) {
  master_status_.Add({{"name", lease}}).Set(leading ? 1 : 0);
}

}  // namespace fk::reconciler
