// `fencekeeper run`: the reconciler as a long-running process.
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <condition_variable>
#include <mutex>
#include <ostream>
#include <thread>

#include "cli/commands.h"
#include "cli/logging.h"
#include "common/duration.h"
#include "http/server.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/config.h"
#include "reconciler/controller.h"
#include "reconciler/leader.h"
#include "reconciler/metrics.h"

namespace fk::cli {

namespace {

// Set by the signal thread; everything that waits also watches it.
struct StopSignal {
  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  bool Wait(std::chrono::milliseconds d) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, d, [this] { return stop; });
  }
  bool stopped() {
    std::lock_guard lock(mu);
    return stop;
  }
};

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
  auto lease = ParseDuration(o.lease_duration), renew = ParseDuration(o.renew_deadline), retry = ParseDuration(o.retry_period);
  if (!lease || !renew || !retry || !(*lease > *renew && *renew > *retry * 12 / 10) || retry->count() <= 0) {
    err << "fencekeeper run: leader election needs durations with lease-duration > renew-deadline > 1.2 x retry-period\n";
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

  // Stop signals are handled by one thread; block them before any other starts.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  StopSignal stop;
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig == 0) return;
    spdlog::info("received {}; stopping", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    std::lock_guard lock(stop.mu);
    stop.stop = true;
    stop.cv.notify_all();
  });
  auto finish = [&](int code) {
    {
      std::lock_guard lock(stop.mu);
      stop.stop = true;
    }
    pthread_kill(signal_thread.native_handle(), SIGTERM);  // wakes sigwait
    signal_thread.join();
    return code;
  };

  reconciler::Metrics metrics;
  kube::ClientOptions client_options;
  client_options.on_request = [&metrics](const std::string& verb, int code) { metrics.ApiRequest(verb, code); };
  auto client = kube::ApiClient::Create(*config, client_options);
  if (!client.ok()) {
    err << "fencekeeper run: " << client.status().ToString() << "\n";
    return finish(kExitUnusable);
  }
  spdlog::info("fencekeeper {} starting: journal {}, cluster {} ({})", "0.1.0", o.journal, (*config).server,
               (*config).source);

  std::atomic<bool> leading{!o.leader_elect};
  // One leadership term: its own API client (so stopping the term's work never
  // disturbs the lease or the next term) and its controller.
  struct Term {
    std::unique_ptr<kube::ApiClient> client;
    std::unique_ptr<reconciler::Controller> controller;
  };
  std::mutex controller_mu;
  Term term;
  auto& controller = term.controller;
  auto ready = [&] {
    std::lock_guard lock(controller_mu);
    return leading.load() && controller && controller->Synced() && controller->JournalWritable();
  };
  std::unique_ptr<http::Server> http_server;
  if (o.http_addr) {
    http_server = std::make_unique<http::Server>(http_host, http_port, [&](const std::string&, const std::string& path) {
      if (path == "/healthz") return http::Reply{200, "ok\n"};
      if (path == "/readyz") {
        const bool r = ready();
        metrics.Ready(r);
        return r ? http::Reply{200, "ready\n"} : http::Reply{503, "not ready\n"};
      }
      if (path == "/metrics") {
        {
          std::lock_guard lock(controller_mu);
          if (controller) {
            for (const auto& i : controller->informers()) metrics.WatchRestarts(i->resource().plural, i->stats().watches);
          }
        }
        metrics.Ready(ready());
        metrics.Leader(leading.load());
        return http::Reply{200, metrics.Render(), "text/plain; version=0.0.4; charset=utf-8"};
      }
      return http::Reply{404, "not found\n"};
    });
    if (Status s = http_server->Start(); !s.ok()) {
      err << "fencekeeper run: " << s.ToString() << "\n";
      return finish(kExitUnusable);
    }
    spdlog::info("serving /healthz, /readyz and /metrics on {}:{}", http_host, http_server->port());
  }

  // The Sandbox API version; an unreachable API server is retried, not fatal.
  std::string version;
  for (int attempt = 0; version.empty(); ++attempt) {
    if (stop.stopped()) return finish(kExitOk);
    auto v = (*client)->DiscoverSandboxVersion();
    if (v.ok()) {
      version = *v;
      break;
    }
    spdlog::warn("cannot discover the Sandbox API yet: {}", v.status().message());
    if (stop.Wait(std::chrono::milliseconds(std::min<int64_t>(30000, 500LL << std::min(attempt, 6))))) return finish(kExitOk);
  }

  reconciler::ControllerOptions copt;
  copt.namespaces = o.namespaces;
  copt.selector = o.selector;
  copt.resync = *resync;
  copt.boundary_port = o.boundary_port;
  copt.instance = Hostname();
  copt.sandbox_version = version;

  auto start_controller = [&]() -> Status {
    Term t;
    auto term_client = kube::ApiClient::Create(*config, client_options);
    if (!term_client.ok()) return term_client.status();
    t.client = std::move(*term_client);
    t.controller = std::make_unique<reconciler::Controller>(*t.client, **journal, copt, &metrics);
    t.controller->Start();
    std::lock_guard lock(controller_mu);
    term = std::move(t);
    return Status::Ok();
  };
  auto stop_controller = [&] {
    Term t;
    {
      std::lock_guard lock(controller_mu);
      t = std::move(term);
    }
    if (t.controller) t.controller->Stop();
    t.controller.reset();  // before its client
  };

  int code = kExitOk;
  if (!o.leader_elect) {
    if (Status s = start_controller(); !s.ok()) {
      if (!stop.stopped()) {
        spdlog::error("{}", s.ToString());
        code = 1;
      }
    } else {
      std::unique_lock lock(stop.mu);
      stop.cv.wait(lock, [&] { return stop.stop; });
    }
  } else {
    reconciler::LeaderOptions lo;
    lo.identity = reconciler::LeaderIdentity(Hostname());
    lo.ns = o.leader_election_namespace.value_or((*config).default_namespace);
    lo.lease_duration = *lease;
    lo.renew_deadline = *renew;
    lo.retry_period = *retry;
    reconciler::LeaderElector elector(**client, lo, &**journal);
    copt.may_write = [&elector] { return elector.MayWrite(); };  // no PATCH once the fence lapses
    const reconciler::LeaderExit exit = elector.Run(
        [&]() -> Status {
          leading = true;
          metrics.Leader(true);
          Status s = start_controller();
          return s.ok() || stop.stopped() ? Status::Ok() : s;  // a stop during start is no failure
        },
        [&] {
          leading = false;
          metrics.Leader(false);
          stop_controller();  // losing the lease stops all writes at once
        },
        [&] { return stop.stopped(); }, [&](std::chrono::milliseconds d) { return !stop.Wait(d); });
    if (exit == reconciler::LeaderExit::kLost) {
      spdlog::error("lost the lease {}/{}: no renewal succeeded within the renew deadline; exiting to start afresh",
                    lo.ns, lo.name);
      code = 1;
    } else if (exit == reconciler::LeaderExit::kStartFailed) {
      spdlog::error("could not start leading; released the lease {}/{}; exiting", lo.ns, lo.name);
      code = 1;
    }
  }
  stop_controller();
  if (http_server) http_server->Stop();
  spdlog::info("stopped");
  return finish(code);
}

}  // namespace fk::cli
