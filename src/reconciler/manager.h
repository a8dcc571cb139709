// The process's wiring, as controller-runtime's Manager: discovery of the
// Sandbox API (retried, never fatal), leadership terms (with --leader-elect:
// acquire the Lease, start a term, fence its writes, end it when the Lease is
// lost), and what the health and metrics endpoints report. `fencekeeper run`
// only turns flags into ManagerOptions and serves Probe() over HTTP.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "common/clock.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/config.h"
#include "reconciler/controller.h"
#include "reconciler/journal_metrics.h"
#include "reconciler/leader.h"
#include "reconciler/metrics.h"
#include "reconciler/readiness.h"
#include "reconciler/retention.h"

namespace fk::reconciler {

struct ManagerOptions {
  kube::ClusterConfig cluster;
  kube::ClientOptions client;
  ControllerOptions controller;         // sandbox_version is discovered
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

  // For /readyz: the caches synced, the journal writable, and (with leader
  // election) this instance leads.
  bool Ready() const;
  // The same, check by check, for /readyz?verbose.
  std::vector<ReadinessCheck> ReadinessChecks() const;
  // For /metrics: the Prometheus text, refreshed.
  std::string RenderMetrics();

 private:
  Status StartTerm();
  void StopTerm();
  // Once a minute: the chain head (ChainHeadLog) and retention's steps.
  void Upkeep(Interrupt& done);
  std::optional<std::string> DiscoverSandboxVersion(kube::ApiClient& client, Interrupt& stop);
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
    std::unique_ptr<Controller> controller;
  };
  mutable std::mutex mu_;
  Term term_;
};

}  // namespace fk::reconciler
