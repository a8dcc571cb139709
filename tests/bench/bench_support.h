// Helpers shared by the end-to-end benchmarks: a simulated API server over
// real HTTP populated with many sandboxes, an API client to it, a directory
// on the real disk for journals (fsync is part of what is measured, so not a
// tmpfs), and the process log sent to a file (a line per transition is part
// of the cost; a terminal full of them is not).
#pragma once

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "kube/client.h"
#include "sim/scenario.h"
#include "sim/server.h"
#include "sim/store.h"
#include "test_support.h"

namespace fk::bench {

using Clock = std::chrono::steady_clock;

inline double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Where journals go: FK_BENCH_DIR, else beside the benchmark binary (the
// build directory, on the machine's disk).
inline std::filesystem::path BenchDir() {
  if (const char* d = std::getenv("FK_BENCH_DIR"); d && *d) return d;
  std::error_code ec;
  auto exe = std::filesystem::canonical("/proc/self/exe", ec);
  return ec ? std::filesystem::temp_directory_path() : exe.parent_path();
}

// Sends the default logger to BenchDir()/fencekeeper_bench.log, once.
inline void LogToFile() {
  static const bool done = [] {
    auto logger = std::make_shared<spdlog::logger>(
        "bench", std::make_shared<spdlog::sinks::basic_file_sink_mt>(
                     (BenchDir() / "fencekeeper_bench.log").string(), /*truncate=*/true));
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
    return true;
  }();
  (void)done;
}

// Polls `pred` every millisecond until it holds or `deadline` passes.
template <class Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds deadline) {
  const auto end = Clock::now() + deadline;
  while (!pred()) {
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// `count` running sandboxes spread over `namespaces` namespaces, each with its
// workload and supervisor pod. Stale: admitted under fence generation 1 while
// the fence is at 2 (each is one suspend away from safe); otherwise healthy.
inline sim::Scenario Fleet(int count, int namespaces, bool stale) {
  sim::Scenario sc;
  for (int n = 0; n < namespaces; ++n) {
    sim::ScenarioNamespace ns;
    ns.name = "agents-" + std::to_string(n);
    ns.fence_generation = stale ? 2 : 1;
    for (int i = n; i < count; i += namespaces) {
      sim::ScenarioSandbox sb;
      sb.name = "sandbox-" + std::to_string(i);
      sb.admitted_fence_generation = 1;
      ns.sandboxes.push_back(std::move(sb));
    }
    sc.namespaces.push_back(std::move(ns));
  }
  return sc;
}

// The simulated API server on 127.0.0.1 (a free port), populated with a
// scenario, plus a count of the sandboxes that went from Running to
// Suspended (a store hook: no polling of the server).
class SimCluster {
 public:
  // `history`: retained watch events; enough that no watch of the run expires.
  SimCluster(const sim::Scenario& scenario, size_t history) {
    sim::SimOptions o = scenario.options;
    o.history_limit = history;
    sim_ = std::make_unique<sim::Simulator>(o);
    sim_->store().AddHook([this](const sim::StoredEvent& e) {
      if (e.kind->plural == "sandboxes" && e.type == "MODIFIED" && Mode(e.previous) == "Running" &&
          Mode(e.object) == "Suspended")
        suspended_.fetch_add(1);
    });
    status_ = sim::ApplyScenario(*sim_, scenario);
    if (!status_.ok()) return;
    server_ = std::make_unique<sim::Server>(*sim_, sim::ServerOptions{});
    status_ = server_->Start();
  }
  ~SimCluster() {
    if (server_) server_->Stop();
  }

  const Status& status() const { return status_; }
  sim::Simulator& sim() { return *sim_; }
  std::string url() const { return server_->url(); }
  int suspended() const { return suspended_.load(); }
  // API requests other than watches (the simulator's own count).
  int NonWatchRequests() const { return sim_->RequestCount("*") - sim_->RequestCount("watch"); }

 private:
  static std::string Mode(const boost::json::value& sandbox) {
    const auto* o = sandbox.if_object();
    const auto* spec = o ? o->if_contains("spec") : nullptr;
    const auto* mode =
        spec && spec->is_object() ? spec->get_object().if_contains("operatingMode") : nullptr;
    return mode && mode->is_string() ? std::string(mode->get_string()) : "";
  }

  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<sim::Server> server_;
  std::atomic<int> suspended_{0};
  Status status_;
};

// An API client over HttpTransport with the production defaults (no
// client-side rate limit), keeping a connection for each of `concurrency`
// threads (as the Manager does for its workers and Event senders).
inline std::unique_ptr<kube::ApiClient> HttpClient(const std::string& url, int concurrency = 4) {
  kube::ClusterConfig cfg;
  cfg.server = url;
  kube::ClientOptions o;
  o.max_idle_connections = static_cast<size_t>(std::max(concurrency, 4));
  auto c = kube::ApiClient::Create(cfg, o);
  return c.ok() ? std::move(*c) : nullptr;
}

}  // namespace fk::bench
