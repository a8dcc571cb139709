#include "reconciler/manager.h"

#include <thread>

#include "common/backoff.h"
#include "common/log.h"
#include "reconciler/journal_metrics.h"
#include "reconciler/scope_log.h"

namespace fk::reconciler {

Manager::Manager(journal::Journal& journal, Metrics& metrics, ManagerOptions options)
    : journal_(journal),
      metrics_(metrics),
      options_(std::move(options)),
      time_(options_.time ? *options_.time : RealTimeSource::Instance()),
      retention_(journal, options_.retention, time_) {
  options_.client.time = &time_;
  // Every worker and every Event sender may have a request in flight.
  options_.client.max_idle_connections = std::max<size_t>(
      options_.client.max_idle_connections, 2 * static_cast<size_t>(options_.controller.workers));
  options_.controller.time = &time_;
  if (options_.leader) {
    options_.leader->time = &time_;
    options_.leader->metrics = &metrics_;  // leader_election_master_status
  }
  AddOwnChecks();
  AddOwnMetricsSources();
  AddRunnable("journal-upkeep", [this](Interrupt& done) { Upkeep(done); });
}

Manager::~Manager() { StopTerm(); }

bool Manager::Ready() const { return AllReady(ReadinessChecks()); }

void Manager::AddReadinessCheck(std::string name, std::function<CheckResult()> check,
                                bool needs_leadership) {
  checks_.push_back([name = std::move(name), check = std::move(check), needs_leadership] {
    CheckResult r = check();
    return std::vector<ReadinessCheck>{{name, r.ok, std::move(r.reason), needs_leadership}};
  });
}

void Manager::AddReadinessChecks(std::function<std::vector<ReadinessCheck>()> checks) {
  checks_.push_back(std::move(checks));
}

void Manager::AddRunnable(std::string name, std::function<void(Interrupt&)> run) {
  runnables_.emplace_back(std::move(name), std::move(run));
}

void Manager::AddMetricsSource(std::function<void()> report) {
  metrics_sources_.push_back(std::move(report));
}

std::vector<ReadinessCheck> Manager::ReadinessChecks() const {
  std::vector<ReadinessCheck> all;
  for (const auto& checks : checks_)
    for (ReadinessCheck& c : checks()) all.push_back(std::move(c));
  return all;
}

void Manager::AddOwnChecks() {
  AddReadinessCheck("journal", [this]() -> CheckResult {
    std::lock_guard lock(mu_);
    const SandboxController* c = term_.controller.get();
    if (!c || c->JournalWritable()) return {true, ""};
    return {false, "not writable: the last write failed"};
  });
  // Listed only while enforcement is off somewhere, never unready for it:
  // dry-run is a choice, said wherever an operator looks.
  if (options_.controller.enforcement.AnyDryRun()) {
    AddReadinessCheck("enforcement", [this]() -> CheckResult {
      const domain::Enforcement& e = options_.controller.enforcement;
      if (e.dry_run_everywhere) return {true, "dry-run in every namespace: nothing is suspended"};
      std::string names;
      for (const std::string& ns : e.dry_run_namespaces) names += (names.empty() ? "" : ", ") + ns;
      return {true, "dry-run in " + names + ": nothing is suspended there"};
    });
  }
  // Never unready for it: a volume short of space still takes every intent.
  AddReadinessCheck("journal-volume", [this]() -> CheckResult {
    return {true, volume_.Summary()};
  });
  if (options_.leader) {
    AddReadinessCheck(
        "leader",
        [this]() -> CheckResult {
          return {leading_.load(), leading_ ? "" : "not leading"};
        },
        /*needs_leadership=*/true);
  }
  AddReadinessChecks([this]() -> std::vector<ReadinessCheck> {
    if (!discovered_.load()) return {{"sandbox-api", false, "not discovered yet"}};
    std::lock_guard lock(mu_);
    const SandboxController* c = term_.controller.get();
    if (!c && options_.leader)
      return {{"reconciler", false, "not started: standby, starts when this replica leads", true}};
    if (!c) return {{"reconciler", false, "not started"}};
    std::vector<ReadinessCheck> checks = c->CacheChecks();
    for (ReadinessCheck& check : c->CoverageChecks()) checks.push_back(std::move(check));
    for (ReadinessCheck& check : c->SupervisorPolicyChecks()) checks.push_back(std::move(check));
    return checks;
  });
}

void Manager::AddOwnMetricsSources() {
  AddMetricsSource([this] { ReportTerm(); });
  AddMetricsSource([this] {
    ReportJournal(journal_, metrics_, time_.Now());
    const journal::SpaceStatus space = volume_.Tick(journal_);
    metrics_.JournalVolume(space.volume.free_bytes, space.volume.size_bytes, space.shedding);
    metrics_.Retention(retention_.rows_pruned(), retention_.failures());
  });
}

void Manager::ReportTerm() {
  std::lock_guard lock(mu_);
  if (!term_.controller) return;
  // Summed over the namespaces' informers; a first watch is no restart.
  std::map<std::string, int> restarts;
  for (const auto& i : term_.controller->informers())
    restarts[i->resource().plural] += std::max(0, i->stats().watches - 1);
  for (const auto& [resource, total] : restarts) metrics_.WatchRestarts(resource, total);
  for (const auto& [kind, total] : DecodeErrorTotals(term_.controller->informers()))
    metrics_.DecodeErrors(kind, total);
  term_.controller->queue().ReportUnfinished();
  metrics_.WatchedNamespaces(term_.controller->CoverageCounts());
  metrics_.SupervisorPolicies(term_.controller->SupervisorPolicyCounts());
  ReportVerdicts(journal_, metrics_);
}

std::string Manager::RenderMetrics() {
  for (const auto& report : metrics_sources_) report();
  metrics_.Ready(Ready());
  metrics_.Leader(leading_.load());
  return metrics_.Render();
}

// The Sandbox API version; an unreachable API server is retried, not fatal.
std::optional<domain::ApiVersion> Manager::DiscoverSandboxVersion(kube::ApiClient& client,
                                                                  Interrupt& stop) {
  for (int attempt = 0;; ++attempt) {
    if (stop.fired()) return std::nullopt;
    auto v = client.DiscoverSandboxVersion({std::nullopt, &stop});  // SIGTERM cuts it short
    if (v.ok()) return *v;
    log::Warn("cannot discover the Sandbox API yet").Error(v.status().message());
    if (!time_.SleepFor(
            ExponentialDelay(std::chrono::milliseconds(500), attempt, std::chrono::seconds(30)),
            stop)) {
      return std::nullopt;
    }
  }
}

Status Manager::StartTerm() {
  Term t;
  auto client = kube::ApiClient::Create(options_.cluster, options_.client);
  if (!client.ok()) return client.status();
  t.client = std::move(*client);
  metrics_.NewTerm();  // the term's informers count watches and decode errors from zero
  t.controller =
      SandboxController::WithInformers(*t.client, journal_, options_.controller, &metrics_);
  t.controller->Start();  // pending intents are settled key by key inside the term
  std::lock_guard lock(mu_);
  term_ = std::move(t);
  return Status::Ok();
}

void Manager::StopTerm() {
  Term t;
  {
    std::lock_guard lock(mu_);
    t = std::move(term_);
  }
  if (t.controller) t.controller->Stop();
  t.controller.reset();  // before its client
}

ManagerExit Manager::Run(Interrupt& stop) {
  auto client = kube::ApiClient::Create(options_.cluster, options_.client);
  if (!client.ok()) {
    log::Error("cannot create the API client").Error(client.status());
    return ManagerExit::kStartFailed;
  }
  auto version = DiscoverSandboxVersion(**client, stop);
  if (!version) return ManagerExit::kStopped;
  options_.controller.sandbox_version = *version;
  discovered_ = true;
  const auto& co = options_.controller;
  log::Info("watching for Sandboxes")
      .Str("scope", ScopeText(co.namespaces))
      .Str("api", kube::ApiVersionOf(kube::SandboxResource(*version)))
      .Str("selector", co.selector);
  Interrupt done;
  std::vector<std::thread> threads;
  for (auto& [name, run] : runnables_) {
    log::Debug("starting runnable").Str("runnable", name);
    threads.emplace_back([&run = run, &done] { run(done); });
  }
  const ManagerExit exit = options_.leader ? RunElected(**client, stop) : RunAlone(stop);
  done.Fire();
  for (std::thread& t : threads) t.join();
  return exit;
}

// The head at start, then while it changes (ChainHeadLog), and the last one;
// retention runs at start and then every minute.
void Manager::Upkeep(Interrupt& done) {
  ChainHeadLog heads;
  do {
    volume_.Tick(journal_);
    retention_.Tick();
    heads.Tick(journal_, time_.MonotonicNow(), &metrics_);
  } while (time_.SleepFor(std::chrono::minutes(1), done));
  ChainHeadLog last(std::chrono::minutes(0));
  last.Tick(journal_, time_.MonotonicNow(), &metrics_);
}

ManagerExit Manager::RunAlone(Interrupt& stop) {
  leading_ = true;
  if (Status s = StartTerm(); !s.ok()) {
    log::Error("cannot start the reconciler").Error(s);
    return ManagerExit::kStartFailed;
  }
  while (time_.SleepFor(std::chrono::hours(1), stop)) {
  }
  StopTerm();
  return ManagerExit::kStopped;
}

namespace {

// How the manager ends when leader election ends with `exit`: loudly unless
// it was asked to stop.
ManagerExit AfterLeading(LeaderExit exit, const LeaderOptions& lo) {
  switch (exit) {
    case LeaderExit::kLost:
      log::Error(
          "lost the lease: no renewal succeeded within the renew deadline; exiting to start "
          "afresh")
          .Namespace(lo.ns)
          .Str("lease", lo.name);
      return ManagerExit::kLostLease;
    case LeaderExit::kStartFailed:
      log::Error("could not start leading; released the lease; exiting")
          .Namespace(lo.ns)
          .Str("lease", lo.name);
      return ManagerExit::kStartFailed;
    default:
      return ManagerExit::kStopped;
  }
}

}  // namespace

ManagerExit Manager::RunElected(kube::ApiClient& client, Interrupt& stop) {
  options_.leader->cancel = &stop;  // a renewal in flight does not hold up SIGTERM
  LeaderElector elector(client, *options_.leader, &journal_);
  // No write once the fence lapses, and none that could leave after it.
  options_.controller.write_fence = [&elector] { return elector.WriteFenceUntil(); };
  const LeaderExit exit = elector.Run(
      [&]() -> Status {
        leading_ = true;
        metrics_.Leader(true);
        Status s = StartTerm();
        return s.ok() || stop.fired() ? Status::Ok() : s;  // a stop during start is no failure
      },
      [&] {
        leading_ = false;
        metrics_.Leader(false);
        StopTerm();  // losing the lease stops all writes at once
      },
      [&] { return stop.fired(); },
      [&](std::chrono::milliseconds d) { return time_.SleepFor(d, stop); });
  StopTerm();
  return AfterLeading(exit, *options_.leader);
}

}  // namespace fk::reconciler
