// One sandbox, one pass (kube-runtime's "reconciler", passed to the
// controller): resolve what the journal left pending for it, observe it from
// the caches, decide(), confirm a verdict that rests on a possibly lagging
// cache with live reads, record the evaluation and the intent durably, send
// the conditional suspend PATCH, and record its outcome.
//
// The transition protocol (docs/design.md#the-transition-protocol): a PATCH is
// never re-sent blindly. Its result is either definite (2xx: applied; 403,
// 404, 422, other 4xx: refused) or unknown (timeout, reset, 5xx, 429, 409),
// and an unknown result is resolved by reading the sandbox: the intent's seq
// and writer id in its fail-closed-journal-seq and -writer annotations mean
// applied (a seq alone may be another journal's); an unchanged
// resourceVersion means the PATCH has not landed and the identical
// conditional PATCH may be sent again (at most one of them can succeed);
// anything else is a conflict, and the fresh object is decided again. An
// intent whose outcome cannot be journaled stays pending and is resolved the
// same way the next time its key comes up — after a restart or as soon as
// the journal takes writes again — without holding up any other sandbox.
//
// Thread-safe: the controller's workers call Reconcile concurrently, never
// for the same key at once (the work queue guarantees it). What one pass
// needs of its own (its deadline, the Retry-After it heard) lives in a Pass
// object on that worker's stack; the journal commits concurrent workers'
// events together (group commit) and each waits only for its own.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/clock.h"
#include "domain/enforcement.h"
#include "domain/journal_state.h"
#include "journal/journal_writer.h"
#include "kube/client.h"
#include "kube/objects.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/event_recorder.h"
#include "reconciler/metrics.h"
#include "reconciler/reconciler.h"

namespace fk::reconciler {

struct ReconcilerOptions {
  domain::ApiVersion sandbox_version = domain::ApiVersion::kV1beta1;
  int boundary_port = domain::kDefaultBoundaryPort;
  // The leadership fence: until when writes may be sent (nullopt: not now;
  // LeaderElector::WriteFenceUntil). A suspend PATCH's deadline is at most
  // that, so a request held up on its way out (a slow connect, a stalled
  // worker) is abandoned rather than written after the lease may have
  // lapsed. Null: always allowed.
  std::function<std::optional<MonoTime>()> write_fence;
  int max_identical_patches = 3;  // sends of one intent's PATCH while its result stays unknown
  int max_rounds = 3;             // 409 -> re-read -> decide again, per pass
  // The API calls of one pass (settling, confirming, patching, reading back)
  // end within this, retries included; whatever is left open is retried with
  // the key's backoff. So one sandbox whose calls hang holds its worker this
  // long at most, and the other sandboxes go on.
  std::chrono::milliseconds pass_budget{30000};
  // This process's writer id (fk::NewWriterId), recorded with every intent it
  // issues and sent with the seq: docs/transitions.md#the-writer-id.
  std::string writer_id;
  // Called at an idle moment after the journal recorded something: hands back
  // what that work freed (`run` passes fk::ReturnFreedMemory, common/heap.h).
  // Null: never — a library does not trim the heap of the process it is in.
  std::function<void()> return_freed_memory;
  // Where enforcement is off: a suspend verdict there records a dry-run
  // intent and sends nothing (docs/design.md#audit-before-enforce).
  domain::Enforcement enforcement;
};

struct ReconcilerStats {
  int reconciles = 0;
  int patches = 0;   // suspend PATCHes sent (an identical re-send counts)
  int warnings = 0;  // fail-closed warnings logged (one per applied transition)
  int applied = 0;
  int conflicts = 0;
  int failures = 0;
  int superseded = 0;
  int journal_errors = 0;
  int resolved_intents = 0;  // pending intents resolved by reading the object
  int confirmations = 0;     // verdicts checked with live reads before an intent
  int unconfirmed = 0;       // ...that the live objects did not bear out
  int fenced = 0;            // writes withheld because leadership could not be confirmed
  int dry_runs = 0;          // dry-run intents recorded (each one warning and one Event)
};

class SandboxReconciler final : public Reconciler {
 public:
  SandboxReconciler(const ClusterCache& cache, kube::ApiClient& client,
                    journal::JournalWriter& journal, TimeSource& time, EventSink* events,
                    Metrics* metrics, ReconcilerOptions options);

  ReconcileResult Reconcile(const ObjectKey& key) override;
  // Every key the journal holds an unsettled intent for, and every sandbox it
  // remembers: one deleted while fencekeeper was down is never announced by
  // the informer, and must be forgotten.
  std::vector<ObjectKey> KeysAtStart() override;
  // Folds the WAL into the main file (a bounded WAL).
  void Idle() override;
  // Interrupts the client's calls in flight.
  void Cancel() override;

  ReconcilerStats stats() const;
  bool JournalWritable() const;

 private:
  // How reading the sandbox back settled an intent (or did not).
  struct ReadBack {
    enum class Kind { kSettled, kSendAgain, kUnknown } kind = Kind::kUnknown;
    domain::SuspendOutcome outcome;  // for kSettled
    kube::ObjectPtr fresh;           // the object read, for a conflict's next round
  };
  struct Round {
    ReconcileResult result;
    kube::ObjectPtr fresh;  // set: a conflict; decide again on this object
  };
  // One pass's own state, on its worker's stack.
  struct Pass {
    MonoTime deadline{};                 // this pass's API calls end by then
    std::optional<int64_t> retry_after;  // the longest Retry-After heard in this pass
    kube::CallOptions Call() const { return {deadline, nullptr}; }
    kube::ApiResult Noted(kube::ApiResult r);  // remembers its Retry-After
    // The pass's last decision, for its debug record ("none": nothing decided).
    std::string verdict = "none", action = "none";
    void Decided(const domain::Decision& d) {
      verdict = domain::ToString(d.verdict);
      action = domain::ToString(d.action);
    }
  };

  ReconcileResult Run(Pass& p, const std::string& ns, const std::string& name);
  bool ResolvePending(Pass& p, const std::string& ns, const std::string& name);
  bool SettleResent(Pass& p, const std::string& ns, const std::string& name);
  // Forgets every uid the journal remembers under ns/name other than
  // `cached_uid` ("" when the cache has none) once a live read confirms it is
  // gone: a name deleted and re-created keeps no stale uid.
  ReconcileResult ForgetReplaced(Pass& p, const std::string& ns, const std::string& name,
                                 const std::string& cached_uid);
  // The journal agrees with the server: an object seen carrying one of this
  // journal's intents whose latest outcome is not `applied` gets `applied`
  // (with its warning and Event). False when that could not be journaled.
  bool AgreeWithServer(const kube::ParsedSandbox& sandbox);
  Round Evaluate(Pass& p, const std::string& ns, const std::string& name,
                 const kube::CachedSandbox& sandbox);
  // A pod as an observation reads it: present, uid, gate, and its labels
  // (what other NetworkPolicies select it by).
  struct ObservedPod {
    domain::PodObservation pod;
    LabelSet labels;
  };
  // What decide() reads about `sb`: from the caches, or (ObserveLive) read
  // from the API server, nullopt when a read failed. Live, only the policies
  // the caches said widen the fence (`suspects`) are read again: a bypass is
  // confirmed, never found, by live reads.
  domain::Snapshot Observe(const kube::ParsedSandbox& sb);
  std::optional<domain::Snapshot> ObserveLive(Pass& p, const kube::ParsedSandbox& sb,
                                              const std::vector<domain::WideningPolicy>& suspects);
  // The snapshot of `sb` with its fences, pods and the namespace's other
  // policies as `policy`, `pod` and `policies` see them.
  domain::Snapshot Assemble(
      const kube::ParsedSandbox& sb,
      const std::function<domain::PolicyObservation(const char*, kube::PolicyRole)>& policy,
      const std::function<ObservedPod(const std::string&)>& pod,
      const std::function<std::vector<domain::NamedPolicy>()>& policies);
  Round Drive(Pass& p, const domain::IntentRecord& intent, bool send_first);
  Round Resend(Pass& p, const std::string& ns, const std::string& name,
               const domain::IntentRecord& refused);
  void WouldSuspend(const domain::Snapshot& snap, const domain::Decision& decision, int64_t seq);
  bool Confirm(Pass& p, const kube::ParsedSandbox& parsed, domain::Snapshot& snap,
               domain::Decision& decision);
  ReadBack Read(Pass& p, const domain::IntentRecord& intent);
  // `observed`: the sandbox as an applied PATCH returned it, journaled in
  // the outcome's commit.
  Round Settle(const domain::IntentRecord& intent, const domain::SuspendOutcome& outcome,
               kube::ObjectPtr fresh, bool known = false,
               const domain::Evaluation* observed = nullptr);
  // The evaluation of the sandbox an applied PATCH returned; nullopt when
  // the answer cannot be read as that sandbox (the next pass observes it).
  std::optional<domain::Evaluation> ObservedAfterPatch(const domain::IntentRecord& intent,
                                                       const std::string& body);
  // The deadline for a write sent now: the pass's, cut to the fence's end;
  // nullopt when the fence does not hold (counted in `fenced`).
  std::optional<MonoTime> WriteDeadline(const Pass& p);
  Result<journal::Recorded> Record(const domain::Evaluation& eval);
  Result<int64_t> RecordOutcome(int64_t seq, const domain::SuspendOutcome& outcome,
                                const domain::IntentRecord* known,
                                const domain::Evaluation* observed);
  Result<size_t> Forget(const std::string& uid, const std::string& why);
  // `failure` (null: the caller logged it) is logged when the journal turns unwritable.
  void Journaled(const Status& status, size_t appended, MonoTime start, const char* failure);
  void Count(int ReconcilerStats::*field);

  const ClusterCache& cache_;
  kube::ApiClient& client_;
  journal::JournalWriter& journal_;
  TimeSource& time_;
  EventSink* events_;
  Metrics* metrics_;
  const ReconcilerOptions options_;
  // The journal's last seq at the last idle moment that handed memory back.
  std::atomic<int64_t> returned_at_seq_{0};
  mutable std::mutex mu_;  // stats_ and journal_ok_, read from other threads
  ReconcilerStats stats_;
  bool journal_ok_ = true;
  // Per sandbox uid, the intent mark last found to need nothing (not ours, or
  // applied already), so a steady sandbox costs no journal read per pass.
  std::map<std::string, kube::IntentMark> checked_marks_;
  // By (ns, name): a refused intent sent again whose result is not journaled
  // yet (SettleResent reads it back before the sandbox is decided again).
  std::map<std::pair<std::string, std::string>, domain::IntentRecord> resent_;
};

// Whether a suspend verdict rests on cached pods or policies that may lag and
// must be confirmed with live reads (docs/design.md#stale-reads-and-lagging-caches). A cached
// workload policy with the recorded UID and a higher generation needs none:
// generations only grow — unless the sandbox is bootstrapping, where the
// live workload pod's scheduling gate decides row 1a.
bool NeedsLiveConfirmation(const domain::Snapshot& snapshot, const domain::Decision& decision);

}  // namespace fk::reconciler
