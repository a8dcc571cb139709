// `fencekeeper sim`: serves the simulated Kubernetes API until SIGINT/SIGTERM.
#include <signal.h>

#include <fstream>
#include <ostream>
#include <sstream>

#include "cli/commands.h"
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

}  // namespace

int RunSim(const SimCommandOptions& options, std::ostream& out, std::ostream& err) {
  const auto colon = options.listen.rfind(':');
  if (colon == std::string::npos) {
    err << "fencekeeper sim: --listen takes HOST:PORT, got '" << options.listen << "'\n";
    return kExitUnusable;
  }
  sim::Scenario scenario;
  if (options.scenario) {
    auto parsed = sim::ParseScenarioFile(*options.scenario);
    if (!parsed.ok()) {
      err << "fencekeeper sim: " << parsed.status().ToString() << "\n";
      return kExitUnusable;
    }
    scenario = std::move(*parsed);
  }
  if (options.latency_ms) scenario.options.latency = std::chrono::milliseconds(*options.latency_ms);
  if (options.drop_watch_after_events) scenario.options.drop_watch_after_events = *options.drop_watch_after_events;

  sim::ServerOptions server_options;
  server_options.host = options.listen.substr(0, colon);
  try {
    server_options.port = static_cast<uint16_t>(std::stoi(options.listen.substr(colon + 1)));
  } catch (...) {
    err << "fencekeeper sim: --listen port is not a number: '" << options.listen << "'\n";
    return kExitUnusable;
  }
  if (options.tls_cert || options.tls_key) {
    bool ok_cert = false, ok_key = false;
    if (options.tls_cert) server_options.tls_cert_pem = ReadFile(*options.tls_cert, &ok_cert);
    if (options.tls_key) server_options.tls_key_pem = ReadFile(*options.tls_key, &ok_key);
    if (!ok_cert || !ok_key) {
      err << "fencekeeper sim: --tls-cert and --tls-key must both name readable PEM files\n";
      return kExitUnusable;
    }
  }
  if (options.token) server_options.bearer_token = *options.token;

  // Block the stop signals before any thread starts, then wait for one.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);

  sim::Simulator simulator(scenario.options);
  if (Status s = sim::ApplyScenario(simulator, scenario); !s.ok()) {
    err << "fencekeeper sim: " << s.ToString() << "\n";
    return kExitUnusable;
  }
  sim::Server server(simulator, server_options);
  if (Status s = server.Start(); !s.ok()) {
    err << "fencekeeper sim: " << s.ToString() << "\n";
    return kExitUnusable;
  }
  if (options.write_kubeconfig) {
    if (Status s = sim::WriteKubeconfig(*options.write_kubeconfig, server.url()); !s.ok()) {
      err << "fencekeeper sim: " << s.ToString() << "\n";
      return kExitUnusable;
    }
  }
  out << "fencekeeper sim: serving the Kubernetes API on " << server.url();
  if (options.write_kubeconfig) out << " (kubeconfig: " << *options.write_kubeconfig << ")";
  out << "\n" << std::flush;
  int sig = 0;
  sigwait(&stop, &sig);
  server.Stop();
  out << "fencekeeper sim: stopped\n";
  return kExitOk;
}

}  // namespace fk::cli
