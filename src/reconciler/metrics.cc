#include "reconciler/metrics.h"

#include <prometheus/text_serializer.h>

#include <map>
#include <mutex>

#include "common/version.h"
#include "domain/decision.h"
#include "domain/event.h"
#include "reconciler/metric_families.h"
#include "reconciler/process_metrics.h"
#include "reconciler/runtime_metrics.h"

namespace fk::reconciler {
namespace {

using namespace families;  // NOLINT(google-build-using-namespace): the builders, in this file only
using prometheus::Labels;

// A durable commit: one WAL fsync, sometimes behind a batch.
const Histogram::BucketBoundaries kJournalBuckets{0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                  0.025,  0.05,  0.1,    0.25,  1};

// The verbs the client sends, and the codes worth a series from the start:
// success, no answer, conflict, throttled, server error.
const std::vector<std::string> kVerbs{"GET", "PATCH", "POST", "PUT", "WATCH"};
const std::vector<std::string> kCodes{"200", "201", "0", "409", "429", "500"};
const std::vector<std::string> kVerdicts{"healthy", "hold", "suspend", "admitting", "ignore"};

std::vector<std::string> Reasons() {
  using domain::Reason;
  std::vector<std::string> out;
  for (Reason r : {Reason::kFenceMissing, Reason::kFenceAltered, Reason::kFenceStale,
                   Reason::kWorkloadGenerationChanged, Reason::kSupervisorGenerationChanged})
    out.push_back(domain::ToString(r));
  return out;
}
std::vector<std::string> Outcomes() {
  using domain::Outcome;
  std::vector<std::string> out;
  for (Outcome o : {Outcome::kApplied, Outcome::kConflict, Outcome::kFailed, Outcome::kSuperseded})
    out.push_back(domain::ToString(o));
  return out;
}
std::vector<std::string> EventKinds() {
  using domain::EventKind;
  std::vector<std::string> out;
  for (EventKind k : {EventKind::kFenceObserved, EventKind::kSandboxObserved, EventKind::kDecided,
                      EventKind::kSuspendIntent, EventKind::kSuspendOutcome, EventKind::kLeadership,
                      EventKind::kForgotten, EventKind::kPruned, EventKind::kWriterStarted})
    out.push_back(domain::ToString(k));
  return out;
}

// Turns monotonic totals counted elsewhere into counter increments.
class Totals {
 public:
  void Advance(Family<Counter>& family, const Labels& labels, double total) {
    std::lock_guard lock(mu_);
    double& seen = seen_[labels];
    if (total > seen) family.Add(labels).Increment(total - seen);
    seen = std::max(seen, total);
  }
  void Reset() {
    std::lock_guard lock(mu_);
    seen_.clear();
  }

 private:
  std::mutex mu_;
  std::map<Labels, double> seen_;
};

// One gauge series per namespace: a namespace that had a value and has none
// now reads 0 once, then goes at the next report, so series do not pile up.
class PerNamespace {
 public:
  explicit PerNamespace(Family<Gauge>& family) : family_(family) {}
  void Set(const std::map<std::string, int>& by_namespace) {
    std::lock_guard lock(mu_);
    for (auto it = series_.begin(); it != series_.end();) {
      if (by_namespace.contains(it->first)) {
        ++it;
      } else if (it->second->Value() != 0) {
        it->second->Set(0);  // a scrape sees the drop
        ++it;
      } else {
        family_.Remove(it->second);
        it = series_.erase(it);
      }
    }
    for (const auto& [ns, n] : by_namespace) {
      Gauge*& g = series_[ns];
      if (!g) g = &family_.Add({{"sandbox_namespace", ns}});
      g->Set(n);
    }
  }

 private:
  Family<Gauge>& family_;
  std::mutex mu_;
  std::map<std::string, Gauge*> series_;  // namespace -> its series
};

}  // namespace

struct Metrics::Impl {
  prometheus::Registry r;
  RuntimeFamilies runtime{r, kControllerName};  // controller-runtime's and client-go's names
  Family<Counter>& reconcile = Counters(r, "fencekeeper_reconcile_total",
                                        "Reconciles by result: success, error (retried with "
                                        "backoff) or requeue (asked back after a delay)");
  Counter& reconcile_errors =
      Counters(r, "fencekeeper_reconcile_errors_total", "Reconciles that ended in an error")
          .Add({});
  Counter& reconcile_panics =
      Counters(r, "fencekeeper_reconcile_panics_total",
               "Reconciles that ended in an exception (retried with backoff): a bug to report")
          .Add({});
  Histogram& reconcile_seconds =
      Histograms(r, "fencekeeper_reconcile_duration_seconds", "Time one reconcile took")
          .Add({}, kReconcileBuckets);

  Gauge& queue_depth =
      Gauges(r, "fencekeeper_workqueue_depth", "Sandbox keys waiting to be reconciled").Add({});
  Counter& queue_adds =
      Counters(r, "fencekeeper_workqueue_adds_total", "Keys added to the work queue").Add({});
  Counter& queue_retries = Counters(r, "fencekeeper_workqueue_retries_total",
                                    "Keys re-queued after a failure, "
                                    "with backoff")
                               .Add({});
  Histogram& queue_wait = Histograms(r, "fencekeeper_workqueue_queue_duration_seconds",
                                     "Time a key waited in the queue before a worker took it")
                              .Add({}, kQueueBuckets);
  Histogram& queue_work = Histograms(r, "fencekeeper_workqueue_work_duration_seconds",
                                     "Time a worker held a key (taken until done)")
                              .Add({}, kQueueBuckets);
  Gauge& queue_unfinished =
      Gauges(r, "fencekeeper_workqueue_unfinished_work_seconds",
             "Age of the work in progress not yet observed in work_duration: large values "
             "mean stuck workers")
          .Add({});
  Gauge& queue_longest = Gauges(r, "fencekeeper_workqueue_longest_running_processor_seconds",
                                "How long the longest-running worker has held its key")
                             .Add({});

  Family<Counter>& api = Counters(r, "fencekeeper_api_requests_total",
                                  "Kubernetes API requests by verb and HTTP code (0: no answer)");
  Family<Histogram>& api_seconds =
      Histograms(r, "fencekeeper_api_request_duration_seconds",
                 "Kubernetes API request latency by verb (WATCH not timed)");

  Family<Counter>& transitions =
      Counters(r, "fencekeeper_transitions_total", "Settled suspend intents by reason and outcome");
  Histogram& journal_append = Histograms(r, "fencekeeper_journal_append_duration_seconds",
                                         "Latency of one durable journal append (commit + fsync)")
                                  .Add({}, kJournalBuckets);
  Counter& journal_errors = Counters(r, "fencekeeper_journal_errors_total",
                                     "Journal writes that failed (disk full, I/O error)")
                                .Add({});
  Gauge& journal_size =
      Gauges(r, "fencekeeper_journal_size_bytes", "Size of the journal's main file").Add({});
  Gauge& journal_wal =
      Gauges(r, "fencekeeper_journal_wal_size_bytes", "Size of the journal's write-ahead log")
          .Add({});
  Family<Counter>& journal_events = Counters(r, "fencekeeper_journal_events_appended_total",
                                             "Events committed to the journal, by kind");
  Gauge& pending = Gauges(r, "fencekeeper_journal_pending_intents",
                          "Suspend intents whose outcome is not recorded yet")
                       .Add({});
  Gauge& pending_age = Gauges(r, "fencekeeper_journal_oldest_pending_intent_age_seconds",
                              "Age of the oldest suspend intent without an outcome (0: none)")
                           .Add({});
  Family<Counter>& pruned_rows =
      Counters(r, "fencekeeper_journal_pruned_rows_total",
               "Journal rows removed by retention (--journal-retention)");
  Family<Counter>& prune_failures =
      Counters(r, "fencekeeper_journal_prune_failures_total",
               "Retention steps that failed and removed nothing (archive or journal not writable)");
  Totals pruned_totals, failure_totals;
  Gauge& volume_free = Gauges(r, "fencekeeper_journal_volume_free_bytes",
                              "Free bytes on the journal's volume (its reserve not counted)")
                           .Add({});
  Gauge& volume_size =
      Gauges(r, "fencekeeper_journal_volume_size_bytes", "Size of the journal's volume").Add({});
  Gauge& shedding = Gauges(r, "fencekeeper_journal_shedding",
                           "1 while the volume is short of space and the journal records "
                           "intents and outcomes only")
                        .Add({});  // one each: Totals are keyed by labels
  Family<Gauge>& chain_head =
      Gauges(r, "fencekeeper_journal_chain_head",
             "The journal's hash-chain head last logged, as labels seq and hash (value: the "
             "seq); a new series at most every five minutes while the head moves");
  Gauge& chain_seq =
      Gauges(r, "fencekeeper_journal_chain_seq", "The seq of the journal's hash-chain head now")
          .Add({});
  std::mutex chain_mu;            // scrapes may run at once
  Gauge* chain_series = nullptr;  // under chain_mu
  std::string chain_hash;         // under chain_mu

  Family<Counter>& watch_restarts = Counters(r, "fencekeeper_watch_restarts_total",
                                             "Watches re-opened after the first, by resource");
  Family<Counter>& decode_errors =
      Counters(r, "fencekeeper_decode_errors_total",
               "Objects and watch lines skipped because they could not be decoded, by kind");
  Family<Counter>& events = Counters(r, "fencekeeper_events_total",
                                     "Kubernetes Events for transitions by result: created, "
                                     "failed (gave up after a retry), dropped (queue full)");
  Family<Gauge>& sandboxes = Gauges(r, "fencekeeper_sandboxes", "Sandboxes by current verdict");
  Family<Gauge>& watched_namespaces =
      Gauges(r, "fencekeeper_watched_namespaces",
             "Watched namespaces by coverage: covered, empty, missing (does not exist), "
             "unfenced (sandboxes, no fence policies), no-sandboxes (fence, none selected)");
  PerNamespace bypassed{Gauges(
      r, "fencekeeper_fence_bypassed_sandboxes",
      "Sandboxes whose fence another NetworkPolicy widens (suspended or held), by namespace")};
  PerNamespace would_suspend{Gauges(r, "fencekeeper_sandboxes_would_suspend",
                                    "Running sandboxes that enforcement would have suspended "
                                    "(their namespace is in dry-run), by namespace")};
  Family<Gauge>& dry_run = Gauges(r, "fencekeeper_enforcement_dry_run",
                                  "1 where enforcement is off (dry-run): sandbox_namespace=\"*\" "
                                  "for every namespace, else one series per namespace");
  Family<Gauge>& supervisor_policies =
      Gauges(r, "fencekeeper_supervisor_policies",
             "Fenced namespaces by the state of their supervisor policy: intact, missing, altered "
             "(never a reason to suspend)");
  Gauge& leader =
      Gauges(r, "fencekeeper_leader", "1 while this instance leads (or leader election is off)")
          .Add({});
  Gauge& ready = Gauges(r, "fencekeeper_ready", "1 while /readyz answers 200").Add({});
  Family<Gauge>& build =
      Gauges(r, "fencekeeper_build_info", "Always 1: the version and git commit of this binary");

  Totals term_totals;     // watch restarts, decode errors: per leadership term
  Totals journal_totals;  // the journal's, for the life of the process

  void PreCreate();
};

void Metrics::Impl::PreCreate() {
  for (const char* result : {"success", "error", "requeue"}) reconcile.Add({{"result", result}});
  for (const std::string& verb : kVerbs) {
    for (const std::string& code : kCodes) api.Add({{"verb", verb}, {"code", code}});
    if (verb != "WATCH") api_seconds.Add({{"verb", verb}}, kApiBuckets);
  }
  for (const std::string& reason : Reasons())
    for (const std::string& outcome : Outcomes())
      transitions.Add({{"reason", reason}, {"outcome", outcome}});
  for (const std::string& kind : EventKinds()) journal_events.Add({{"kind", kind}});
  pruned_rows.Add({});
  prune_failures.Add({});
  for (const char* resource : {"sandboxes", "networkpolicies", "pods"}) {
    watch_restarts.Add({{"resource", resource}});
    decode_errors.Add({{"kind", resource}});
  }
  for (const char* result : {"created", "failed", "dropped"}) events.Add({{"result", result}});
  for (const std::string& verdict : kVerdicts) sandboxes.Add({{"verdict", verdict}});
  for (const char* state : {"intact", "missing", "altered"})
    supervisor_policies.Add({{"state", state}});
  build.Add({{"version", Version()}, {"commit", GitCommit()}}).Set(1);
}

Metrics::Metrics() : impl_(std::make_unique<Impl>()) { impl_->PreCreate(); }
Metrics::~Metrics() = default;

void Metrics::Reconcile(const std::string& result, double seconds) {
  // fencekeeper's own family predates requeue_after and calls it requeue.
  const std::string ours = result == "requeue_after" ? "requeue" : result;
  impl_->reconcile.Add({{"result", ours}}).Increment();
  if (result == "error") impl_->reconcile_errors.Increment();
  impl_->reconcile_seconds.Observe(seconds);
  impl_->runtime.Reconcile(result, seconds);
}
void Metrics::ReconcilePanic() {
  impl_->reconcile_panics.Increment();
  impl_->runtime.ReconcilePanic();
}
void Metrics::ActiveWorkers(int delta) { impl_->runtime.ActiveWorkers(delta); }
void Metrics::MaxConcurrentReconciles(int workers) {
  impl_->runtime.MaxConcurrentReconciles(workers);
}

void Metrics::QueueAdd() {
  impl_->queue_adds.Increment();
  impl_->runtime.QueueAdd();
}
void Metrics::QueueRetry() {
  impl_->queue_retries.Increment();
  impl_->runtime.QueueRetry();
}
void Metrics::QueueDepth(size_t depth) {
  impl_->queue_depth.Set(static_cast<double>(depth));
  impl_->runtime.QueueDepth(depth);
}
void Metrics::QueueWait(double seconds) {
  impl_->queue_wait.Observe(seconds);
  impl_->runtime.QueueWait(seconds);
}
void Metrics::QueueWork(double seconds) {
  impl_->queue_work.Observe(seconds);
  impl_->runtime.QueueWork(seconds);
}
void Metrics::QueueUnfinished(double total_seconds, double longest_seconds) {
  impl_->queue_unfinished.Set(total_seconds);
  impl_->queue_longest.Set(longest_seconds);
  impl_->runtime.QueueUnfinished(total_seconds, longest_seconds);
}

void Metrics::ApiRequest(const std::string& verb, int code, double seconds,
                         const std::string& host) {
  impl_->api.Add({{"verb", verb}, {"code", std::to_string(code)}}).Increment();
  const bool timed = verb != "WATCH";
  if (timed) impl_->api_seconds.Add({{"verb", verb}}, kApiBuckets).Observe(seconds);
  impl_->runtime.RestRequest(timed ? verb : "GET", code, seconds, host, timed);
}
void Metrics::LeaderElection(const std::string& lease, bool leading) {
  impl_->runtime.LeaderStatus(lease, leading);
}

void Metrics::Transition(const std::string& reason, const std::string& outcome) {
  impl_->transitions.Add({{"reason", reason}, {"outcome", outcome}}).Increment();
}
void Metrics::JournalAppend(double seconds) { impl_->journal_append.Observe(seconds); }
void Metrics::JournalError() { impl_->journal_errors.Increment(); }
void Metrics::JournalFiles(int64_t size_bytes, int64_t wal_size_bytes) {
  impl_->journal_size.Set(static_cast<double>(size_bytes));
  impl_->journal_wal.Set(static_cast<double>(wal_size_bytes));
}
void Metrics::JournalEvents(const std::map<std::string, uint64_t>& totals) {
  for (const auto& [kind, total] : totals)
    impl_->journal_totals.Advance(impl_->journal_events, {{"kind", kind}},
                                  static_cast<double>(total));
}
void Metrics::Retention(uint64_t rows_pruned, uint64_t failures) {
  impl_->pruned_totals.Advance(impl_->pruned_rows, {}, static_cast<double>(rows_pruned));
  impl_->failure_totals.Advance(impl_->prune_failures, {}, static_cast<double>(failures));
}
void Metrics::JournalVolume(int64_t free_bytes, int64_t size_bytes, bool shedding) {
  impl_->volume_free.Set(static_cast<double>(free_bytes));
  impl_->volume_size.Set(static_cast<double>(size_bytes));
  impl_->shedding.Set(shedding ? 1 : 0);
}
void Metrics::PendingIntents(size_t count, double oldest_age_seconds) {
  impl_->pending.Set(static_cast<double>(count));
  impl_->pending_age.Set(oldest_age_seconds);
}

void Metrics::WatchRestarts(const std::string& resource, int total) {
  impl_->term_totals.Advance(impl_->watch_restarts, {{"resource", resource}}, total);
}
void Metrics::DecodeErrors(const std::string& kind, int total) {
  impl_->term_totals.Advance(impl_->decode_errors, {{"kind", kind}}, total);
}
void Metrics::NewTerm() { impl_->term_totals.Reset(); }

void Metrics::Event(const std::string& result) {
  impl_->events.Add({{"result", result}}).Increment();
}
void Metrics::SandboxesByVerdict(const std::map<std::string, int>& counts) {
  for (const std::string& v : kVerdicts) {
    auto it = counts.find(v);
    impl_->sandboxes.Add({{"verdict", v}}).Set(it == counts.end() ? 0 : it->second);
  }
}
void Metrics::WatchedNamespaces(const std::map<std::string, int>& by_state) {
  for (const auto& [state, n] : by_state) impl_->watched_namespaces.Add({{"state", state}}).Set(n);
}
void Metrics::BypassedSandboxes(const std::map<std::string, int>& by_namespace) {
  impl_->bypassed.Set(by_namespace);
}
void Metrics::WouldSuspendSandboxes(const std::map<std::string, int>& by_namespace) {
  impl_->would_suspend.Set(by_namespace);
}
void Metrics::Enforcement(const domain::Enforcement& e) {
  impl_->dry_run.Add({{"sandbox_namespace", "*"}}).Set(e.dry_run_everywhere ? 1 : 0);
  for (const std::string& ns : e.dry_run_namespaces)
    impl_->dry_run.Add({{"sandbox_namespace", ns}}).Set(1);
}
void Metrics::SupervisorPolicies(const std::map<std::string, int>& by_state) {
  for (const char* state : {"intact", "missing", "altered"}) {
    auto it = by_state.find(state);
    impl_->supervisor_policies.Add({{"state", state}}).Set(it == by_state.end() ? 0 : it->second);
  }
}
void Metrics::ChainHead(int64_t seq, const std::string& hash) {
  std::lock_guard lock(impl_->chain_mu);
  if (impl_->chain_series && impl_->chain_hash == hash) return;
  if (impl_->chain_series) impl_->chain_head.Remove(impl_->chain_series);
  impl_->chain_series = &impl_->chain_head.Add({{"seq", std::to_string(seq)}, {"hash", hash}});
  impl_->chain_series->Set(static_cast<double>(seq));
  impl_->chain_hash = hash;
}
void Metrics::ChainSeq(int64_t seq) { impl_->chain_seq.Set(static_cast<double>(seq)); }
void Metrics::Leader(bool leading) { impl_->leader.Set(leading ? 1 : 0); }
void Metrics::Ready(bool ready) { impl_->ready.Set(ready ? 1 : 0); }

std::string Metrics::Render() const {
  std::vector<prometheus::MetricFamily> families = impl_->r.Collect();
  for (auto& f : ProcessFamilies(ReadProcessSample())) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace fk::reconciler
