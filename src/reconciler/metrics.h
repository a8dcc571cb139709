// The reconciler's Prometheus metrics, named as controller-runtime and
// client-go name theirs (prefixed fencekeeper_), the same under their own
// names and label keys (controller_runtime_*, workqueue_*, rest_client_*,
// leader_election_master_status: runtime_metrics.h), plus the standard
// process_* families. Every series an alert or a dashboard reads exists from the start
// at zero: each labelled family is created with all its known label values,
// so increase() sees the first event. prometheus-cpp stays behind this
// interface so its headers are not included everywhere. Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "domain/enforcement.h"

namespace fk::reconciler {

// The controller's name, the value of the controller and name labels of
// controller-runtime's and client-go's families: controller-runtime names a
// controller after the lowercased kind it reconciles (Sandbox).
inline constexpr const char* kControllerName = "sandbox";

class Metrics {
 public:
  Metrics();
  ~Metrics();

  // One reconcile, with controller-runtime's result: "success", "error"
  // (retried with backoff), "requeue_after" (asked to come back after a
  // delay; fencekeeper_reconcile_total calls it "requeue") or "requeue".
  void Reconcile(const std::string& result, double seconds);
  // A pass ended in an exception (controller-runtime's reconcile panic); it
  // is also counted as a reconcile with result "error".
  void ReconcilePanic();
  // A worker took a key (+1) or finished with it (-1).
  void ActiveWorkers(int delta);
  void MaxConcurrentReconciles(int workers);

  // The work queue (client-go's workqueue metrics).
  void QueueAdd();
  void QueueRetry();
  void QueueDepth(size_t depth);
  void QueueWait(double seconds);  // queued until a worker took it
  void QueueWork(double seconds);  // taken until Done
  // In-progress work not yet observed by QueueWork: its total age and the oldest.
  void QueueUnfinished(double total_seconds, double longest_seconds);

  // One API request's answer (code 0: none) and how long it took; WATCH
  // requests are counted but not timed (a watch lasts minutes). `host` is
  // the API server's host[:port] as in its URL (kube::ApiHost), client-go's
  // host label; the first request to a host creates its usual series at zero.
  void ApiRequest(const std::string& verb, int code, double seconds, const std::string& host);

  void Transition(const std::string& reason, const std::string& outcome);
  void JournalAppend(double seconds);  // one durable append (Record/RecordOutcome)
  void JournalError();
  void JournalFiles(int64_t size_bytes, int64_t wal_size_bytes);
  // Events committed by kind, as monotonic totals (the journal's own stats).
  void JournalEvents(const std::map<std::string, uint64_t>& totals);
  // Intents without an outcome, and how old the oldest is (0: none).
  void PendingIntents(size_t count, double oldest_age_seconds);
  // fencekeeper_journal_chain_head{seq, hash}: one series, the head last
  // logged (ChainHeadLog: a new series at most every five minutes).
  void ChainHead(int64_t seq, const std::string& hash);
  // fencekeeper_journal_chain_seq: the head's seq now, a value without labels.
  void ChainSeq(int64_t seq);
  // Retention's totals: rows pruned, and steps that failed (nothing removed).
  void Retention(uint64_t rows_pruned, uint64_t failures);
  // The journal's volume (Journal::CheckSpace) and whether it sheds rows.
  void JournalVolume(int64_t free_bytes, int64_t size_bytes, bool shedding);

  // Watches re-opened after the first (a monotonic total for this term).
  void WatchRestarts(const std::string& resource, int total);
  // Objects and lines skipped as undecodable, by kind (sandboxes,
  // networkpolicies, pods): a monotonic total for this term.
  void DecodeErrors(const std::string& kind, int total);
  // A new leadership term's informers count from zero again.
  void NewTerm();

  // A Kubernetes Event: "created", "failed" (gave up) or "dropped" (queue full).
  void Event(const std::string& result);
  void SandboxesByVerdict(const std::map<std::string, int>& counts);
  // Watched namespaces per coverage state (covered, empty, missing,
  // unfenced, no-sandboxes: reconciler/coverage.h), every state given.
  void WatchedNamespaces(const std::map<std::string, int>& by_state);
  // Sandboxes whose latest verdict is fence-bypassed (suspended or held), per
  // namespace: a namespace that had some and has none now reads 0, then goes
  // at the next scrape, so series do not pile up.
  void BypassedSandboxes(const std::map<std::string, int>& by_namespace);
  // Running sandboxes whose latest verdict is a dry-run suspension, per
  // namespace (series come and go as BypassedSandboxes').
  void WouldSuspendSandboxes(const std::map<std::string, int>& by_namespace);
  // Where enforcement is off: fencekeeper_enforcement_dry_run, set at start.
  void Enforcement(const domain::Enforcement& enforcement);
  // Namespaces by the state of their supervisor policy: intact, missing,
  // altered (every state given). Never a reason to suspend; OpenShell
  // re-creates it.
  void SupervisorPolicies(const std::map<std::string, int>& by_state);
  void Leader(bool leading);
  // leader_election_master_status{name=lease}: 1 while this instance holds
  // the Lease, 0 otherwise; there only with leader election (LeaderElector).
  void LeaderElection(const std::string& lease, bool leading);
  void Ready(bool ready);

  std::string Render() const;  // Prometheus text exposition format

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fk::reconciler
