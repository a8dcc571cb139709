#include "reconciler/process_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace fk::reconciler {
namespace {

// The fields after the command name in /proc/self/stat, so that a name with
// spaces or parentheses cannot shift them. Field 3 (state) comes first.
std::optional<std::vector<std::string>> StatFields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  const auto close = line.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  if (fields.size() < 22) return std::nullopt;
  return fields;
}

// The system's boot time (btime in /proc/stat), for the process start time.
double BootTimeSeconds() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = 0;
      in >> t;
      return t;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

double OpenFds() {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return 0;
  double n = 0;
  while (const dirent* e = readdir(dir))
    if (e->d_name[0] != '.') ++n;
  closedir(dir);
  return n - 1;  // the directory's own descriptor
}

prometheus::MetricFamily One(const std::string& name, const std::string& help,
                             prometheus::MetricType type, double value) {
  prometheus::ClientMetric m;
  if (type == prometheus::MetricType::Counter) {
    m.counter.value = value;
  } else {
    m.gauge.value = value;
  }
  return {name, help, type, {m}};
}

}  // namespace

std::optional<ProcessSample> ReadProcessSample() {
  const auto f = StatFields();
  if (!f) return std::nullopt;
  // Fields numbered as in proc(5): utime 14, stime 15, starttime 22, vsize 23, rss 24.
  const auto field = [&](int n) { return std::stod((*f)[n - 3]); };
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  ProcessSample s;
  s.cpu_seconds = (field(14) + field(15)) / ticks;
  s.start_time_seconds = BootTimeSeconds() + field(22) / ticks;
  s.virtual_bytes = field(23);
  s.resident_bytes = field(24) * static_cast<double>(sysconf(_SC_PAGESIZE));
  s.open_fds = OpenFds();
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) s.max_fds = static_cast<double>(limit.rlim_cur);
  return s;
}

std::vector<prometheus::MetricFamily> ProcessFamilies(const std::optional<ProcessSample>& sample) {
  if (!sample) return {};
  using prometheus::MetricType;
  const ProcessSample& s = *sample;
  return {
      One("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
          MetricType::Counter, s.cpu_seconds),
      One("process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::Gauge,
          s.resident_bytes),
      One("process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::Gauge,
          s.virtual_bytes),
      One("process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
          MetricType::Gauge, s.start_time_seconds),
      One("process_open_fds", "Number of open file descriptors.", MetricType::Gauge, s.open_fds),
      One("process_max_fds", "Maximum number of open file descriptors.", MetricType::Gauge,
          s.max_fds),
  };
}

}  // namespace fk::reconciler
