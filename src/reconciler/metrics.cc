#include "reconciler/metrics.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <mutex>

namespace fk::reconciler {

struct Metrics::Impl {
  prometheus::Registry registry;
  prometheus::Family<prometheus::Counter>& transitions =
      prometheus::BuildCounter()
          .Name("fencekeeper_transitions_total")
          .Help("Fail-closed transitions by reason and outcome")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& appends =
      prometheus::BuildCounter()
          .Name("fencekeeper_journal_appended_events_total")
          .Help("Events appended to the journal")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& journal_errors =
      prometheus::BuildCounter()
          .Name("fencekeeper_journal_errors_total")
          .Help("Journal writes that failed (disk full, I/O error)")
          .Register(registry);
  prometheus::Family<prometheus::Histogram>& commit =
      prometheus::BuildHistogram()
          .Name("fencekeeper_journal_commit_seconds")
          .Help("Latency of durable journal commits")
          .Register(registry);
  prometheus::Histogram& commit_histogram =
      commit.Add({}, prometheus::Histogram::BucketBoundaries{0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                             0.025, 0.05, 0.1, 0.25, 1});
  prometheus::Family<prometheus::Counter>& api =
      prometheus::BuildCounter()
          .Name("fencekeeper_api_requests_total")
          .Help("Kubernetes API requests by verb and HTTP code (0: no answer)")
          .Register(registry);
  prometheus::Family<prometheus::Counter>& watch_restarts =
      prometheus::BuildCounter()
          .Name("fencekeeper_watch_restarts_total")
          .Help("Watches (re)opened, by resource")
          .Register(registry);
  prometheus::Family<prometheus::Gauge>& sandboxes = prometheus::BuildGauge()
                                                         .Name("fencekeeper_sandboxes")
                                                         .Help("Sandboxes by current verdict")
                                                         .Register(registry);
  prometheus::Family<prometheus::Gauge>& queue = prometheus::BuildGauge()
                                                     .Name("fencekeeper_queue_depth")
                                                     .Help("Sandbox keys waiting to be reconciled")
                                                     .Register(registry);
  prometheus::Gauge& queue_depth = queue.Add({});
  prometheus::Family<prometheus::Gauge>& leader_family =
      prometheus::BuildGauge()
          .Name("fencekeeper_leader")
          .Help("1 while this instance leads (or leader election is off)")
          .Register(registry);
  prometheus::Gauge& leader = leader_family.Add({});
  prometheus::Family<prometheus::Gauge>& ready_family = prometheus::BuildGauge()
                                                            .Name("fencekeeper_ready")
                                                            .Help("1 while /readyz answers 200")
                                                            .Register(registry);
  prometheus::Gauge& ready = ready_family.Add({});
  prometheus::Family<prometheus::Counter>& decode_errors =
      prometheus::BuildCounter()
          .Name("fencekeeper_decode_errors_total")
          .Help("Objects and watch lines skipped because they could not be decoded, by kind")
          .Register(registry);
  std::mutex mu;  // guards the monotonic totals
  std::map<std::string, int> watch_totals;
  std::map<std::string, int> decode_totals;
};

Metrics::Metrics() : impl_(std::make_unique<Impl>()) {
  for (const char* kind : {"sandboxes", "networkpolicies", "pods"})
    impl_->decode_errors.Add({{"kind", kind}});
}
Metrics::~Metrics() = default;

void Metrics::Transition(const std::string& reason, const std::string& outcome) {
  impl_->transitions.Add({{"reason", reason}, {"outcome", outcome}}).Increment();
}
void Metrics::JournalAppend(size_t events, double commit_seconds) {
  impl_->appends.Add({}).Increment(static_cast<double>(events));
  impl_->commit_histogram.Observe(commit_seconds);
}
void Metrics::JournalError() { impl_->journal_errors.Add({}).Increment(); }
void Metrics::ApiRequest(const std::string& verb, int code) {
  impl_->api.Add({{"verb", verb}, {"code", std::to_string(code)}}).Increment();
}
void Metrics::WatchRestarts(const std::string& resource, int total) {
  std::lock_guard lock(impl_->mu);
  int& seen = impl_->watch_totals[resource];
  if (total > seen) impl_->watch_restarts.Add({{"resource", resource}}).Increment(total - seen);
  seen = std::max(seen, total);
}
void Metrics::DecodeErrors(const std::string& kind, int total) {
  std::lock_guard lock(impl_->mu);
  int& seen = impl_->decode_totals[kind];
  if (total > seen) impl_->decode_errors.Add({{"kind", kind}}).Increment(total - seen);
  seen = std::max(seen, total);
}
void Metrics::SandboxesByVerdict(const std::map<std::string, int>& counts) {
  for (const char* v : {"healthy", "hold", "suspend", "admitting", "ignore"}) {
    auto it = counts.find(v);
    impl_->sandboxes.Add({{"verdict", v}}).Set(it == counts.end() ? 0 : it->second);
  }
}
void Metrics::QueueDepth(size_t depth) { impl_->queue_depth.Set(static_cast<double>(depth)); }
void Metrics::Leader(bool leading) { impl_->leader.Set(leading ? 1 : 0); }
void Metrics::Ready(bool ready) { impl_->ready.Set(ready ? 1 : 0); }

std::string Metrics::Render() const {
  return prometheus::TextSerializer().Serialize(impl_->registry.Collect());
}

}  // namespace fk::reconciler
