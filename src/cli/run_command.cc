// `fencekeeper run`: the reconciler as a long-running process.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <ostream>
#include <thread>

#include "cli/commands.h"
#include "cli/logging.h"
#include "common/duration.h"
#include "http/server.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/config.h"
#include "reconciler/manager.h"

namespace fk::cli {

namespace {

std::string Hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "fencekeeper";
  return buf;
}

}  // namespace

int RunRun(const RunOptions& o, std::ostream& err) {
  if (Status s = SetUpLogging(o.log_format, o.log_level); !s.ok()) {
    err << "fencekeeper run: " << s.message() << "\n";
    return kExitUnusable;
  }
  auto resync = ParseDuration(o.resync);
  if (!resync || resync->count() <= 0) {
    err << "fencekeeper run: --resync takes a duration like 30s, got '" << o.resync << "'\n";
    return kExitUnusable;
  }
  auto lease = ParseDuration(o.lease_duration), renew = ParseDuration(o.renew_deadline),
       retry = ParseDuration(o.retry_period);
  if (!lease || !renew || !retry || !(*lease > *renew && *renew > *retry * 12 / 10) ||
      retry->count() <= 0) {
    err << "fencekeeper run: leader election needs durations with lease-duration > renew-deadline "
           "> 1.2 x retry-period\n";
    return kExitUnusable;
  }
  if (o.boundary_port <= 0 || o.boundary_port > 65535) {
    err << "fencekeeper run: --boundary-port must be 1-65535\n";
    return kExitUnusable;
  }
  std::string http_host;
  uint16_t http_port = 0;
  if (o.http_addr) {
    const auto colon = o.http_addr->rfind(':');
    try {
      if (colon == std::string::npos) throw std::invalid_argument("no port");
      http_host = o.http_addr->substr(0, colon);
      if (http_host.empty()) http_host = "0.0.0.0";
      http_port = static_cast<uint16_t>(std::stoi(o.http_addr->substr(colon + 1)));
    } catch (...) {
      err << "fencekeeper run: --http-addr takes HOST:PORT, got '" << *o.http_addr << "'\n";
      return kExitUnusable;
    }
  }

  // The journal first: a journal we must not touch is refused within seconds.
  auto journal = journal::Journal::Open(o.journal);
  if (!journal.ok()) {
    err << "fencekeeper run: " << journal.status().ToString() << "\n";
    return kExitUnusable;
  }
  auto config = kube::ResolveConfig(o.kubeconfig, o.context, kube::ProcessEnv());
  if (!config.ok()) {
    err << "fencekeeper run: " << config.status().ToString() << "\n";
    return kExitUnusable;
  }

  reconciler::Metrics metrics;
  reconciler::ManagerOptions mo;
  mo.cluster = *config;
  mo.client.on_request = [&metrics](const std::string& verb, int code) {
    metrics.ApiRequest(verb, code);
  };
  mo.controller.namespaces = o.namespaces;
  mo.controller.selector = o.selector;
  mo.controller.resync = *resync;
  mo.controller.boundary_port = o.boundary_port;
  mo.controller.instance = Hostname();
  if (o.leader_elect) {
    reconciler::LeaderOptions lo;
    lo.identity = reconciler::LeaderIdentity(Hostname());
    lo.ns = o.leader_election_namespace.value_or((*config).default_namespace);
    lo.lease_duration = *lease;
    lo.renew_deadline = *renew;
    lo.retry_period = *retry;
    mo.leader = lo;
  }
  if (auto probe = kube::ApiClient::Create(*config, mo.client);
      !probe.ok()) {  // bad TLS material, a bad URL
    err << "fencekeeper run: " << probe.status().ToString() << "\n";
    return kExitUnusable;
  }

  // Stop signals are handled by one thread; block them before any other starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Interrupt stop;
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (stop.fired()) return;  // woken by finish() below
    spdlog::info("received {}; stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    stop.Fire();
  });
  auto finish = [&](int code) {
    stop.Fire();
    pthread_kill(signal_thread.native_handle(), SIGTERM);  // wakes sigwait
    signal_thread.join();
    return code;
  };

  spdlog::info("fencekeeper {} starting: journal {}, cluster {} ({})", "0.1.0", o.journal,
               (*config).server, (*config).source);
  reconciler::Manager manager(**journal, metrics, std::move(mo));
  std::unique_ptr<http::Server> http_server;
  if (o.http_addr) {
    http_server = std::make_unique<http::Server>(
        http_host, http_port, [&](const std::string&, const std::string& path) {
          if (path == "/healthz") return http::Reply{200, "ok\n"};
          if (path == "/readyz") {
            const bool ready = manager.Ready();
            metrics.Ready(ready);
            return ready ? http::Reply{200, "ready\n"} : http::Reply{503, "not ready\n"};
          }
          if (path == "/metrics")
            return http::Reply{200, manager.RenderMetrics(),
                               "text/plain; version=0.0.4; charset=utf-8"};
          return http::Reply{404, "not found\n"};
        });
    if (Status s = http_server->Start(); !s.ok()) {
      err << "fencekeeper run: " << s.ToString() << "\n";
      return finish(kExitUnusable);
    }
    spdlog::info("serving /healthz, /readyz and /metrics on {}:{}", http_host, http_server->port());
  }

  const reconciler::ManagerExit exit = manager.Run(stop);
  if (http_server) http_server->Stop();
  spdlog::info("stopped");
  return finish(exit == reconciler::ManagerExit::kStopped ? kExitOk : 1);
}

}  // namespace fk::cli
