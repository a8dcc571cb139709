// The reconciler (DESIGN §3): informers for sandboxes, the namespace fences
// and the boundary pods feed a work queue of sandbox keys; one worker
// observes a key from the caches and the journal, calls decide(), records the
// evaluation (and, for a suspend, the intent) in one durable journal
// transaction, sends the conditional suspend PATCH, and records its outcome.
// A periodic resync re-enqueues every cached sandbox without any API call.
// In steady state it sends nothing but its watches and appends nothing.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "reconciler/metrics.h"
#include "reconciler/work_queue.h"

namespace fk::reconciler {

struct ControllerOptions {
  std::vector<std::string> namespaces;  // empty: all namespaces
  std::string selector = "openshell.ai/managed-by=openshell";
  std::chrono::milliseconds resync{30000};
  int boundary_port = 5500;
  std::string instance = "fencekeeper";  // reportingInstance of Events
  std::string sandbox_version = "v1beta1";
  bool create_events = true;
  kube::InformerOptions informer;  // backoff settings; namespace/selector are set per informer
  std::chrono::milliseconds retry_base{50};
  std::chrono::milliseconds retry_max{60000};
  TimeSource* time = nullptr;  // the real clock by default
};

struct ControllerStats {
  int resync_passes = 0;
  int reconciles = 0;
  int patches = 0;       // suspend PATCHes sent
  int warnings = 0;      // fail-closed warnings logged (one per applied transition)
  int applied = 0;
  int conflicts = 0;
  int failures = 0;
  int events_created = 0;
  int events_failed = 0;
  int journal_errors = 0;
  int resolved_intents = 0;
};

class Controller {
 public:
  Controller(kube::ApiClient& client, journal::Journal& journal, ControllerOptions options,
             Metrics* metrics = nullptr);
  ~Controller();
  Controller(const Controller&) = delete;
  Controller& operator=(const Controller&) = delete;

  // Resolves every intent the journal holds without an outcome by reading
  // the object again. Run before Start; retries until done or Stop.
  Status ResolvePendingIntents();
  void Start();
  // Stops the worker after its current step, then the informers. Idempotent.
  // It also stops `client` (interrupting retries in flight), so every
  // controller gets a client of its own.
  void Stop();

  bool Synced() const;
  bool JournalWritable() const { return journal_ok_.load(); }
  ControllerStats stats() const;
  std::map<std::string, int> VerdictCounts() const;
  const std::vector<std::unique_ptr<kube::Informer>>& informers() const { return informers_; }

 private:
  enum class Step { kDone, kRetry };
  void Worker();
  void Resyncer();
  Step Reconcile(const std::string& key);
  Step Evaluate(const std::string& ns, const std::string& name, kube::ObjectPtr sandbox, int depth);
  void EnqueueNamespace(const std::string& ns);
  void OnPod(const kube::Change& c);
  kube::ObjectPtr FindInformerObject(int kind, const std::string& ns, const std::string& name) const;
  std::vector<kube::ObjectPtr> SandboxesIn(const std::string& ns) const;
  void CreateEvent(const domain::SandboxObservation& sb, const domain::Decision& d, int64_t seq);
  Result<journal::Journal::Recorded> RecordTimed(const domain::Evaluation& eval);
  Result<int64_t> OutcomeTimed(int64_t seq, const domain::SuspendOutcome& outcome);
  void UpdateVerdicts();  // a full recount, once at start
  bool Stopping() const;

  kube::ApiClient& client_;
  journal::Journal& journal_;
  ControllerOptions options_;
  Metrics* metrics_;
  TimeSource& time_;
  WorkQueue queue_;
  // informers_ holds, per watched namespace (or one for all), a sandbox,
  // a networkpolicy and a pod informer: index = 3 * namespace_index + kind.
  std::vector<std::unique_ptr<kube::Informer>> informers_;
  std::thread worker_, resyncer_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  bool started_ = false;
  std::atomic<bool> journal_ok_{true};
  ControllerStats stats_;
  std::map<std::string, int> verdicts_;
};

// The suspend PATCH body of DESIGN §2 (contract).
std::string SuspendPatchBody(const std::string& api_version, const std::string& resource_version,
                             const std::string& reason, int64_t journal_seq);

}  // namespace fk::reconciler
