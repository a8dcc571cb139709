// Building prometheus-cpp families in one line each, and the bucket layouts
// fencekeeper's families and the controller-runtime/client-go families share.
// Included by the metrics sources only: it pulls in prometheus-cpp's headers.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <string>

namespace fk::reconciler::families {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Gauge;
using prometheus::Histogram;

template <typename Builder>
auto& Build(Builder builder, prometheus::Registry& registry, const std::string& name,
            const std::string& help) {
  return builder.Name(name).Help(help).Register(registry);
}
inline Family<Counter>& Counters(prometheus::Registry& r, const std::string& name,
                                 const std::string& help) {
  return Build(prometheus::BuildCounter(), r, name, help);
}
inline Family<Gauge>& Gauges(prometheus::Registry& r, const std::string& name,
                             const std::string& help) {
  return Build(prometheus::BuildGauge(), r, name, help);
}
inline Family<Histogram>& Histograms(prometheus::Registry& r, const std::string& name,
                                     const std::string& help) {
  return Build(prometheus::BuildHistogram(), r, name, help);
}

// controller-runtime's reconcile buckets, thinned: 5 ms to a minute.
inline const Histogram::BucketBoundaries kReconcileBuckets{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                                                           1,     2.5,  5,     10,   30,  60};
// client-go's workqueue buckets: 10 ns by powers of ten (to 1000 s here).
inline const Histogram::BucketBoundaries kQueueBuckets{1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3,
                                                       1e-2, 1e-1, 1,    10,   100,  1000};
// client-go's rest_client_request_duration_seconds buckets.
inline const Histogram::BucketBoundaries kApiBuckets{0.005, 0.025, 0.1, 0.25, 0.5, 1,
                                                     2,     4,     8,   15,   30,  60};

}  // namespace fk::reconciler::families
