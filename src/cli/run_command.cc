// `fencekeeper run`: the reconciler as a long-running process.
#include <unistd.h>

#include <malloc.h>
#include <signal.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <functional>
#include <ostream>
#include <string_view>
#include <thread>

#include "cli/commands.h"
#include "cli/logging.h"
#include "cli/probes.h"
#include "cli/run_flags.h"
#include "cli/start_files.h"
#include "common/heap.h"
#include "common/host_name.h"
#include "common/random_id.h"
#include "common/version.h"
#include "domain/dns_names.h"
#include "http/server.h"
#include "journal/journal.h"
#include "journal/writer_lock.h"
#include "kube/client.h"
#include "kube/config.h"
#include "reconciler/manager.h"

namespace fk::cli {

namespace {

// The longest request body the probe and metrics listeners read.
constexpr size_t kProbeMaxBodyBytes = size_t{64} << 10;

// Starts a listener if one was asked for (nullptr if not), and logs where.
Result<std::unique_ptr<http::Server>> Listen(const std::optional<ListenAddress>& at,
                                             const std::string& serves, http::Handler handler) {
  if (!at) return std::unique_ptr<http::Server>();
  http::ServerOptions options;
  options.host = at->host;
  options.port = at->port;
  // Probes and metrics are GETs: a body is refused before it is buffered,
  // so anyone who can reach the port cannot make the controller hold one.
  options.max_body_bytes = kProbeMaxBodyBytes;
  auto server = std::make_unique<http::Server>(std::move(options), std::move(handler));
  if (Status s = server->Start(); !s.ok()) return s;
  // The address as one field too: tests and people grep "127.0.0.1:PORT".
  log::Info("serving " + serves)
      .Str("address", at->host + ":" + std::to_string(server->port()))
      .Int("port", server->port());
  return server;
}

// Where the manager's options come from: the validated flags and the
// resolved cluster config; API requests are counted into `metrics`.
reconciler::ManagerOptions ManagerOptionsFor(const RunSettings& o,
                                             const kube::ClusterConfig& config,
                                             const std::string& lease_ns,
                                             reconciler::Metrics& metrics) {
  reconciler::ManagerOptions mo;
  mo.cluster = config;
  mo.client.qps = o.kube_api_qps;
  mo.client.burst = o.kube_api_burst;
  mo.client.on_request = [&metrics, host = kube::ApiHost(config.server)](const std::string& verb,
                                                                         int code, double seconds) {
    metrics.ApiRequest(verb, code, seconds, host);
  };
  mo.controller.namespaces = o.namespaces;
  mo.controller.selector = o.selector;
  mo.controller.resync = o.resync;
  mo.controller.informer.streaming_list = o.streaming_lists;
  mo.controller.boundary_port = o.boundary_port;
  mo.controller.enforcement = o.enforcement;
  mo.controller.workers = o.workers;
  mo.controller.instance = HostName();
  // Freed heap goes back to the system after a listing (and during a long
  // one), and when the queue drains after a burst of work: glibc would keep
  // each peak resident (docs/performance.md).
  mo.controller.informer.return_freed_memory = ReturnFreedMemory;
  mo.controller.return_freed_memory = ReturnFreedMemory;
  mo.retention = {o.journal_retention, o.journal_archive};
  if (o.leader_elect) {
    reconciler::LeaderOptions lo;
    lo.identity = reconciler::LeaderIdentity(HostName());
    lo.ns = lease_ns;
    lo.name = o.leader_election_id;
    lo.lease_duration = o.lease_duration;
    lo.renew_deadline = o.renew_deadline;
    lo.retry_period = o.retry_period;
    mo.leader = lo;
  }
  return mo;
}

// The archive directory must be there and writable before anything is
// pruned into it: a mistyped path is refused at start, not found a minute in.
Status CheckArchiveDir(const std::string& dir) {
  if (dir.empty()) return Status::Ok();
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::InvalidArgument("--journal-archive '" + dir + "': not a directory");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return Status::InvalidArgument("--journal-archive '" + dir +
                                   "': not writable: " + std::strerror(errno));
  return Status::Ok();
}

// SIGINT and SIGTERM fire `stop()`, handled by one thread. Construct it before
// any other thread starts: the signals are blocked here and the threads
// started later inherit the mask, so only sigwait sees them.
class StopSignals {
 public:
  StopSignals() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    thread_ = std::thread([this] { AwaitSignal(); });
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;
  // Finish() has normally run; this covers an exception on the way out. join()
  // cannot fail here (our own joinable thread, joined from another one).
  ~StopSignals() {
    try {
      Finish(0);
    } catch (...) {
    }
  }

  Interrupt& stop() { return stop_; }

  // Wakes and joins the signal thread (once); passes `code` through.
  int Finish(int code) {
    if (!thread_.joinable()) return code;
    stop_.Fire();
    // SIGTERM is blocked in every thread and the signal thread waits for it in
    // sigwait: this wakes that wait, it terminates nothing.
    // NOLINTNEXTLINE(bugprone-bad-signal-to-kill-thread): wakes our own sigwait (see above)
    pthread_kill(thread_.native_handle(), SIGTERM);
    thread_.join();
    return code;
  }

 private:
  void AwaitSignal() {
    int sig = 0;
    sigwait(&signals_, &sig);
    if (stop_.fired()) return;  // woken by Finish()
    log::Info("stopping").Str("signal", sig == SIGTERM ? "SIGTERM" : "SIGINT");
    stop_.Fire();
  }

  sigset_t signals_{};
  Interrupt stop_;
  std::thread thread_;
};

using FailFn = std::function<int(std::string_view error)>;

// Serves probes and metrics and runs the manager until `stop` fires.
int ServeUntilStopped(const RunSettings& o, journal::Journal& journal, reconciler::Metrics& metrics,
                      reconciler::ManagerOptions mo, Interrupt& stop, const FailFn& fail) {
  reconciler::Manager manager(journal, metrics, std::move(mo));
  const bool metrics_apart = o.metrics.has_value() || o.metrics_off;
  auto http_server = Listen(
      o.http, metrics_apart ? "/healthz and /readyz" : "/healthz, /readyz and /metrics",
      [&](const http::Request& req) { return Probe(req, manager, metrics, !metrics_apart); });
  auto metrics_server = Listen(o.metrics, "/metrics", [&](const http::Request& req) {
    return MetricsEndpoint(req, manager);
  });
  for (const auto* started : {&http_server, &metrics_server}) {
    if (!started->ok()) return fail(started->status().ToString());
  }
  const reconciler::ManagerExit exit = manager.Run(stop);
  for (auto* server : {&*http_server, &*metrics_server})
    if (*server) (*server)->Stop();
  log::Info("stopped");
  return exit == reconciler::ManagerExit::kStopped ? kExitOk : 1;
}

}  // namespace

namespace {

// With the writer lock held: opens the journal, resolves the cluster and
// serves until stopped. Every refusal is `fail`'s (exit 2).
// Enforcement off anywhere is worth a warning at every start: nothing will be
// suspended there (docs/design.md#audit-before-enforce).
void LogEnforcement(const domain::Enforcement& e) {
  if (e.dry_run_everywhere) {
    log::Warn(
        "enforcement is off in every namespace (--enforcement dry-run): stale sandboxes "
        "keep running; what would be suspended is journaled, logged and sent as Events");
    return;
  }
  if (e.dry_run_namespaces.empty()) return;
  std::string names;
  for (const std::string& ns : e.dry_run_namespaces) names += (names.empty() ? "" : ",") + ns;
  log::Warn(
      "enforcement is off in some namespaces (--dry-run-namespace): stale sandboxes there "
      "keep running")
      .Str("namespaces", names);
}

int OpenAndServe(const RunSettings& o, const std::string& writer_id, const FailFn& fail) {
  journal::OpenOptions journal_options;
  // A reserve that a full volume gives up for intents and outcomes (docs/retention.md).
  if (auto volume = journal::SpaceOf(o.journal); volume.ok())
    journal_options.reserve_bytes = journal::ReserveFor(*volume);
  auto journal = journal::Journal::Open(o.journal, journal_options);
  if (!journal.ok()) return fail(journal.status().ToString());
  auto config = kube::ResolveConfig(o.kubeconfig, o.context, kube::ProcessEnv());
  if (!config.ok()) return fail(config.status().ToString());
  const std::string lease_ns = o.leader_election_namespace.value_or((*config).default_namespace);
  if (o.leader_elect && !domain::IsDns1123Label(lease_ns)) {
    return fail("the Lease's namespace '" + lease_ns + "' (from " + (*config).source +
                ") is not a DNS-1123 label; set --leader-election-namespace");
  }
  reconciler::Metrics metrics;
  metrics.Enforcement(o.enforcement);
  reconciler::ManagerOptions mo = ManagerOptionsFor(o, *config, lease_ns, metrics);
  mo.controller.writer_id =
      writer_id;  // every intent carries it (docs/transitions.md#the-writer-id)
  if (auto probe = kube::ApiClient::Create(*config, mo.client);
      !probe.ok()) {  // bad TLS material, a bad URL
    return fail(probe.status().ToString());
  }

  // Every row from here on is this writer's (docs/transitions.md#the-writer-id);
  // recorded once the flags and config are good, so a start refused for them
  // leaves the journal as it was.
  if (Status s = (*journal)->RecordWriterStart(writer_id, o.enforcement); !s.ok())
    return fail(s.ToString());
  StopSignals signals;
  log::Info("fencekeeper starting")
      .Str("version", fk::Version())
      .Str("commit", fk::GitCommit())
      .Str("journal", o.journal)
      .Str("writer", writer_id)
      .Str("cluster", (*config).server)
      .Str("config", (*config).source)
      .Str("enforcement", o.enforcement.Mode());
  LogEnforcement(o.enforcement);
  return signals.Finish(
      ServeUntilStopped(o, **journal, metrics, std::move(mo), signals.stop(), fail));
}

// glibc gives each thread that allocates an arena of its own, up to eight
// per core; a long-lived record allocated in one of many arenas pins pages
// that the workers' short-lived garbage left mostly free. Two arenas held
// resident memory per sandbox at 10,000 from 5.99 to 4.81 KiB, evaluating all
// in about the same time (docs/performance.md). An arena limit set in the
// environment (MALLOC_ARENA_MAX, or glibc.malloc.arena_max in
// GLIBC_TUNABLES) still decides. Called before any thread.
void LimitMallocArenas() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const bool tuned =
      tunables && std::string_view(tunables).find("arena_max") != std::string_view::npos;
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr && !tuned) mallopt(M_ARENA_MAX, 2);
}

}  // namespace

int RunRun(const RunOptions& flags, std::ostream& err) {
  LimitMallocArenas();
  // Fatal errors in the format asked for (text when --log-format itself is bad).
  const log::Format format = ParseLogFormat(flags.log_format).value_or(log::Format::kText);
  const FailFn fail = [&](std::string_view error) {
    ReportFatal(err, format, "fencekeeper run: cannot start", error);
    return kExitUnusable;
  };
  auto settings = ParseRunFlags(flags);
  if (!settings.ok()) return fail(settings.status().message());
  const RunSettings& o = *settings;
  if (Status s = SetUpLogging(o.log_format, o.log_level); !s.ok()) return fail(s.message());

  // Drawn once: this process's writer id, in the lock's holder details and
  // the start-up record.
  const std::string writer_id = NewWriterId();
  // The journal first: a journal we must not touch is refused within seconds.
  // Its writer lock before anything else touches it, held until the journal
  // is closed.
  if (Status s = CheckArchiveDir(o.journal_archive); !s.ok()) return fail(s.message());
  const StartFiles files(o.journal);
  auto writer_lock = journal::WriterLock::Acquire(o.journal, writer_id);
  if (!writer_lock.ok()) return fail(writer_lock.status().ToString());  // not ours to touch
  const int code = OpenAndServe(o, writer_id, fail);
  // A start that failed leaves nothing it created: the journal was never used.
  if (code == kExitUnusable) files.RemoveCreatedButLock();
  writer_lock->reset();
  if (code == kExitUnusable) files.RemoveCreatedLock();
  return code;
}

}  // namespace fk::cli
