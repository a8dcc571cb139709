// The process's wiring, as controller-runtime's Manager: discovery of the
// Sandbox API (retried, never fatal), leadership terms (with --leader-elect:
// acquire the Lease, start a term, fence its writes, end it when the Lease is
// lost), and what the health and metrics endpoints report. `fencekeeper run`
// only turns flags into ManagerOptions and serves Probe() over HTTP.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/config.h"
#include "reconciler/journal_metrics.h"
#include "reconciler/leader.h"
#include "reconciler/metrics.h"
#include "reconciler/readiness.h"
#include "reconciler/retention.h"
#include "reconciler/sandbox_controller.h"

namespace fk::reconciler {

struct ManagerOptions {
  kube::ClusterConfig cluster;
  kube::ClientOptions client;
  SandboxControllerOptions controller;  // sandbox_version is discovered
  std::optional<LeaderOptions> leader;  // set: leader election
  RetentionOptions retention;           // retention 0: the journal keeps everything
  TimeSource* time = nullptr;           // the real clock by default
};

// How the process ends.
enum class ManagerExit {
  kStopped,      // asked to stop: exit 0
  kLostLease,    // no renewal within the renew deadline: exit 1, restart fresh
  kStartFailed,  // a term could not start; the Lease was released: exit 1
};

class Manager {
 public:
  // `metrics` must outlive the manager; `journal` is its only writer.
  Manager(journal::Journal& journal, Metrics& metrics, ManagerOptions options);
  ~Manager();

  // Runs until `stop` fires or leadership ends.
  ManagerExit Run(Interrupt& stop);

  // For /readyz: every registered check passes (the journal writable, the
  // Sandbox API discovered, the caches synced and, with leader election,
  // this instance leads).
  bool Ready() const;
  // The same, check by check, for /readyz?verbose, in the order registered.
  std::vector<ReadinessCheck> ReadinessChecks() const;
  // For /metrics: every metrics source reports, then the Prometheus text.
  std::string RenderMetrics();

  // controller-runtime's AddReadyzCheck: a named check of /readyz. The
  // manager registers its own (journal, journal-volume, leader, the
  // reconciler's); more may be added before Run and before the probes are
  // served (the lists are not guarded against a concurrent reader).
  struct CheckResult {
    bool ok = false;
    std::string reason;  // why not ok, or (ok) anything worth saying
  };
  void AddReadinessCheck(std::string name, std::function<CheckResult()> check,
                         bool needs_leadership = false);
  // Checks whose number and names change (one per informer): listed in place.
  void AddReadinessChecks(std::function<std::vector<ReadinessCheck>()> checks);
  // controller-runtime's Runnable: runs on its own thread from Run's start
  // until `done` fires as Run returns, leader or not.
  void AddRunnable(std::string name, std::function<void(Interrupt& done)> run);
  // Called at each scrape before the text is rendered: for gauges computed,
  // not kept.
  void AddMetricsSource(std::function<void()> report);

 private:
  void AddOwnChecks();
  void AddOwnMetricsSources();
  // What the term's controller reports: informers, queue, coverage, verdicts.
  void ReportTerm();
  Status StartTerm();
  void StopTerm();
  // Once a minute: the volume, retention's steps and the chain head (ChainHeadLog).
  void Upkeep(Interrupt& done);
  std::optional<domain::ApiVersion> DiscoverSandboxVersion(kube::ApiClient& client,
                                                           Interrupt& stop);
  // The reconciler runs at once, until `stop` (no leader election).
  ManagerExit RunAlone(Interrupt& stop);
  // The reconciler runs while this replica holds the Lease.
  ManagerExit RunElected(kube::ApiClient& client, Interrupt& stop);

  journal::Journal& journal_;
  Metrics& metrics_;
  ManagerOptions options_;
  TimeSource& time_;
  Retention retention_;
  mutable VolumeWatch volume_;
  std::atomic<bool> leading_{false};
  std::atomic<bool> discovered_{false};  // the Sandbox API version is known
  // One leadership term: its own API client (so stopping the term's work
  // never disturbs the Lease or the next term) and its controller.
  struct Term {
    std::unique_ptr<kube::ApiClient> client;
    std::unique_ptr<SandboxController> controller;
  };
  mutable std::mutex mu_;
  Term term_;
  std::vector<std::function<std::vector<ReadinessCheck>()>> checks_;
  std::vector<std::pair<std::string, std::function<void(Interrupt&)>>> runnables_;
  std::vector<std::function<void()>> metrics_sources_;
};

}  // namespace fk::reconciler
