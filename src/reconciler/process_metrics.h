// The standard Prometheus process metrics (process_cpu_seconds_total,
// process_resident_memory_bytes, ...), read from /proc/self when scraped, as
// every Prometheus client library exports them: dashboards and alerts written
// for other processes work on fencekeeper unchanged.
#pragma once

#include <prometheus/metric_family.h>

#include <optional>
#include <string>
#include <vector>

namespace fk::reconciler {

struct ProcessSample {
  double cpu_seconds = 0;
  double resident_bytes = 0;
  double virtual_bytes = 0;
  double start_time_seconds = 0;  // since the epoch
  double open_fds = 0;
  double max_fds = 0;
};

// Reads /proc/self/{stat,fd,limits}; nullopt where /proc is not mounted.
std::optional<ProcessSample> ReadProcessSample();

// The six families from a sample (an empty vector for nullopt).
std::vector<prometheus::MetricFamily> ProcessFamilies(const std::optional<ProcessSample>& sample);

}  // namespace fk::reconciler
