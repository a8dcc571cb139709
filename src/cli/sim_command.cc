// `fencekeeper sim`: serves the simulated Kubernetes API until SIGINT/SIGTERM.
#include <signal.h>

#include <condition_variable>
#include <fstream>
#include <map>
#include <mutex>
#include <ostream>
#include <sstream>
#include <thread>
#include <tuple>

#include "cli/commands.h"
#include "common/duration.h"
#include "sim/fault_spec.h"
#include "sim/flow_requests.h"
#include "sim/scenario.h"
#include "sim/server.h"

namespace fk::cli {

namespace {

std::string ReadFile(const std::string& path, bool* ok) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  *ok = static_cast<bool>(in);
  return ss.str();
}

// The scenario with the command line's faults and options applied; false
// (after saying why on `err`) if a flag is malformed.
bool BuildScenario(const SimCommandOptions& options, sim::Scenario* scenario, std::ostream& err) {
  if (options.scenario) {
    auto parsed = sim::ParseScenarioFile(*options.scenario);
    if (!parsed.ok()) {
      err << "fencekeeper sim: " << parsed.status().ToString() << "\n";
      return false;
    }
    *scenario = std::move(*parsed);
  }
  for (const std::string& spec : options.faults) {
    auto rule = sim::ParseFaultSpec(spec);
    if (!rule) {
      err << "fencekeeper sim: --fault takes VERB:RESOURCE:STATUS[:RETRY_AFTER[:COUNT]] (VERB one "
             "of get, list, watch, create, update, patch, delete, *; COUNT -1 or > 0), got '"
          << spec << "'\n";
      return false;
    }
    scenario->faults.push_back(*rule);
  }
  for (auto [flag, value, target] :
       {std::tuple{"--drop-watches-every", &options.drop_watches_every,
                   &scenario->options.drop_watches_every},
        std::tuple{"--expire-history-every", &options.expire_history_every,
                   &scenario->options.expire_history_every},
        std::tuple{"--latency", &options.latency, &scenario->options.latency}}) {
    if (!*value) continue;
    auto d = ParseDuration(**value);
    if (!d || (d->count() <= 0 && std::string(flag) != "--latency")) {
      err << "fencekeeper sim: " << flag << " takes a duration like 5s, got '" << **value << "'\n";
      return false;
    }
    *target = *d;
  }
  if (options.drop_watch_after_events)
    scenario->options.drop_watch_after_events = *options.drop_watch_after_events;
  if (options.watch_list) {
    const std::string& gate = *options.watch_list;
    if (gate == "on") {
      scenario->options.watch_list = sim::WatchListGate::kOn;
    } else if (gate == "off") {
      scenario->options.watch_list = sim::WatchListGate::kOff;
    } else if (gate == "silent") {
      scenario->options.watch_list = sim::WatchListGate::kSilent;
    } else {
      err << "fencekeeper sim: --watch-list takes on, off or silent, got '" << gate << "'\n";
      return false;
    }
  }
  return true;
}

// --drop-watches-every and --expire-history-every: a thread that applies
// them on their schedule until destroyed.
class PeriodicFaults {
 public:
  PeriodicFaults(sim::Simulator& simulator, const sim::SimOptions& options)
      : thread_([this, &simulator, options] { Loop(simulator, options); }) {}
  ~PeriodicFaults() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void Loop(sim::Simulator& simulator, const sim::SimOptions& options) {
    const auto drop = options.drop_watches_every, expire = options.expire_history_every;
    if (drop.count() == 0 && expire.count() == 0) return;
    auto next_drop = std::chrono::steady_clock::now() + drop,
         next_expire = std::chrono::steady_clock::now() + expire;
    std::unique_lock lock(mu_);
    while (!stopping_) {
      auto next = std::chrono::steady_clock::time_point::max();
      if (drop.count()) next = std::min(next, next_drop);
      if (expire.count()) next = std::min(next, next_expire);
      cv_.wait_until(lock, next, [&] { return stopping_; });
      const auto now = std::chrono::steady_clock::now();
      if (expire.count() && now >= next_expire) {
        simulator.ExpireHistory();
        next_expire = now + expire;
      }
      if (drop.count() && now >= next_drop) {
        simulator.DropWatches();
        next_drop = now + drop;
      }
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members it uses exist
};

// --listen, --tls-cert/--tls-key and --token as the server's options; false
// (after saying why on `err`) if one is malformed or a file cannot be read.
bool BuildServerOptions(const SimCommandOptions& options, sim::ServerOptions* server_options,
                        std::ostream& err) {
  const auto colon = options.listen.rfind(':');
  if (colon == std::string::npos) {
    err << "fencekeeper sim: --listen takes HOST:PORT, got '" << options.listen << "'\n";
    return false;
  }
  server_options->host = options.listen.substr(0, colon);
  try {
    server_options->port = static_cast<uint16_t>(std::stoi(options.listen.substr(colon + 1)));
  } catch (...) {
    err << "fencekeeper sim: --listen port is not a number: '" << options.listen << "'\n";
    return false;
  }
  if (options.tls_cert || options.tls_key) {
    bool ok_cert = false, ok_key = false;
    if (options.tls_cert) server_options->tls_cert_pem = ReadFile(*options.tls_cert, &ok_cert);
    if (options.tls_key) server_options->tls_key_pem = ReadFile(*options.tls_key, &ok_key);
    if (!ok_cert || !ok_key) {
      err << "fencekeeper sim: --tls-cert and --tls-key must both name readable PEM files\n";
      return false;
    }
  }
  if (options.token) server_options->bearer_token = *options.token;
  return true;
}

int Fail(std::ostream& err, const Status& s) {
  err << "fencekeeper sim: " << s.ToString() << "\n";
  return kExitUnusable;
}

}  // namespace

int RunSim(const SimCommandOptions& options, std::ostream& out, std::ostream& err) {
  sim::ServerOptions server_options;
  if (!BuildServerOptions(options, &server_options, err)) return kExitUnusable;
  sim::Scenario scenario;
  if (!BuildScenario(options, &scenario, err)) return kExitUnusable;

  // Block the stop signals before any thread starts, then wait for one.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  sim::Simulator simulator(scenario.options);
  if (Status s = sim::ApplyScenario(simulator, scenario); !s.ok()) return Fail(err, s);
  sim::Server server(simulator, server_options);
  if (Status s = server.Start(); !s.ok()) return Fail(err, s);
  if (options.write_kubeconfig) {
    // Trusts the certificates served (a self-signed one, or the chain up to
    // its CA) and sends the token required, so any client needs no edit.
    const sim::KubeconfigAccess access{server.url(), server_options.tls_cert_pem,
                                       server_options.bearer_token.value_or("")};
    if (Status s = sim::WriteKubeconfig(*options.write_kubeconfig, access); !s.ok())
      return Fail(err, s);
  }
  out << "fencekeeper sim: serving the Kubernetes API on " << server.url();
  if (options.write_kubeconfig) out << " (kubeconfig: " << *options.write_kubeconfig << ")";
  out << "\n" << std::flush;
  {
    PeriodicFaults periodic(simulator, scenario.options);
    // OpenShell's flows on request (sim.fencekeeper.dev/openshell-flow), each
    // step said on stdout.
    std::map<std::string, int> boundary_ports;
    for (const sim::ScenarioNamespace& ns : scenario.namespaces)
      boundary_ports[ns.name] = ns.boundary_port;
    sim::FlowTicker flows(simulator, std::move(boundary_ports),
                          scenario.options.openshell_flow_step, [&](const std::string& line) {
                            out << "fencekeeper sim: openshell " << line << "\n" << std::flush;
                          });
    int sig = 0;
    sigwait(&stop, &sig);
  }
  server.Stop();
  out << "fencekeeper sim: stopped\n";
  return kExitOk;
}

}  // namespace fk::cli
