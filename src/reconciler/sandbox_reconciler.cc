#include "reconciler/sandbox_reconciler.h"

#include "common/log.h"
#include "domain/decision.h"
#include "domain/fold.h"
#include "kube/sandbox_api.h"

namespace fk::reconciler {
using domain::Action;
using domain::IntentRecord;
using domain::Outcome;
using domain::Reason;
using domain::SuspendOutcome;
using domain::Verdict;

namespace {

// The compact form of a sandbox read live (after a conflict), as the cache keeps it.
SandboxPtr CompactOf(const kube::ObjectPtr& object, domain::ApiVersion version) {
  auto c = kube::Transformed(
      [version](const kube::DecodedObject& d) { return kube::CompactSandbox(d, version); }, object);
  return c.ok() ? kube::As<kube::CachedSandbox>(*c) : nullptr;
}

// A refusal that settles the attempt: the server looked at the PATCH and said
// no. 409 and 429 are not among them: a 409 may follow an attempt of ours
// that landed, and both are resolved by reading the object.
bool DefiniteRefusal(const kube::ApiResult& r) {
  const int code = kube::HttpCode(r);
  return code >= 400 && code < 500 && code != 409 && code != 429;
}

// The sandbox's admitted fence generation (its annotation) and the fence's
// generation as last observed: what a fence-stale transition moved between.
struct FenceGenerations {
  std::optional<int64_t> from, to;
};

FenceGenerations FenceOf(const domain::Snapshot& o) {
  std::optional<int64_t> to;
  if (o.workload_fence.present) to = o.workload_fence.generation;
  return {o.sandbox.fence_generation, to};
}

// As the journal last observed the sandbox (what its intent was decided on).
FenceGenerations FenceOf(const domain::JournalState& s, const std::string& uid) {
  const auto it = s.sandboxes.find(uid);
  if (it == s.sandboxes.end() || !it->second.observed) return {};
  return {it->second.observed->fence_from(), it->second.observed->fence_to()};
}

// A held sandbox is converged: logged at info, never above (docs/design.md#held-sandboxes).
void LogHeld(const domain::Snapshot& snap, const domain::Decision& decision) {
  const FenceGenerations fence = FenceOf(snap);
  log::Info("sandbox held")
      .Reason(domain::ToString(decision.reason))
      .Int(log::key::kFenceFrom, fence.from)
      .Int(log::key::kFenceTo, fence.to)
      .Str("note", decision.note);
}

// A dry-run intent's one warning: what enforcement would have done.
void LogWouldSuspend(const domain::Snapshot& snap, const domain::Decision& decision, int64_t seq) {
  const FenceGenerations fence = FenceOf(snap);
  log::Warn("would suspend (dry run)")
      .Namespace(snap.sandbox.ns)
      .Sandbox(snap.sandbox.name)
      .Uid(snap.sandbox.uid)
      .Reason(domain::ToString(decision.reason))
      .Seq(seq)
      .Int(log::key::kFenceFrom, fence.from)
      .Int(log::key::kFenceTo, fence.to)
      .Str("note", decision.note);
}

// One record per settled intent; an applied one is its transition's one warning.
void LogSettled(const IntentRecord& intent, const SuspendOutcome& outcome,
                const FenceGenerations& fence) {
  const bool applied = outcome.outcome == Outcome::kApplied;
  const bool failed = outcome.outcome == Outcome::kFailed;
  log::Entry e(applied  ? log::Level::kWarn
               : failed ? log::Level::kError
                        : log::Level::kInfo,
               applied  ? "fail-closed: suspended sandbox"
               : failed ? "suspend refused; will retry"
                        : "suspend not applied");
  e.Namespace(intent.ns)
      .Sandbox(intent.name)
      .Uid(intent.uid)
      .Reason(domain::ToString(intent.intent.reason))
      .Seq(intent.seq)
      .Int(log::key::kFenceFrom, fence.from)
      .Int(log::key::kFenceTo, fence.to)
      .Str("note", intent.intent.note);
  if (!applied) e.Str("outcome", domain::ToString(outcome.outcome)).Str("detail", outcome.detail);
}

std::string IntentBody(const IntentRecord& i) {
  return kube::SuspendPatchBody({i.intent.api_version,
                                 i.intent.resource_version,
                                 domain::ToString(i.intent.reason),
                                 {i.seq, i.intent.writer}});
}

kube::IntentMark MarkOf(const IntentRecord& i) { return {i.seq, i.intent.writer}; }

// Applied at: the generation the sandbox is suspended at; if someone resumed
// it since, the generation the intent observed, so the resume is a new episode.
SuspendOutcome AppliedOnObject(const IntentRecord& intent, const domain::SandboxObservation& now,
                               const char* how) {
  const int64_t at = now.should_run ? intent.intent.observed_generation : now.generation;
  return {Outcome::kApplied, at, how};
}

}  // namespace

bool NeedsLiveConfirmation(const domain::Snapshot& s, const domain::Decision& d) {
  // A dry-run intent is confirmed as a real one is: it says what enforcing would do.
  if (d.action == Action::kNone) return false;
  // Row 1a may hold on the live pods: a cached workload pod can be the old,
  // un-gated one that a resume has already replaced by a gated one.
  if (s.sandbox.bootstrapping && s.sandbox.bootstrap_phase == "preparing") return true;
  if (d.reason == Reason::kFenceStale) {
    const auto& sb = s.sandbox;
    const bool same_fence_newer_generation =
        sb.fence_uid && *sb.fence_uid == s.workload_fence.uid && sb.fence_generation &&
        s.workload_fence.generation > *sb.fence_generation;
    if (same_fence_newer_generation) return false;
  }
  return true;
}

SandboxReconciler::SandboxReconciler(const ClusterCache& cache, kube::ApiClient& client,
                                     journal::JournalWriter& journal, TimeSource& time,
                                     EventSink* events, Metrics* metrics, ReconcilerOptions options)
    : cache_(cache),
      client_(client),
      journal_(journal),
      time_(time),
      events_(events),
      metrics_(metrics),
      options_(std::move(options)) {}

ReconcilerStats SandboxReconciler::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

bool SandboxReconciler::JournalWritable() const {
  std::lock_guard lock(mu_);
  return journal_ok_;
}

void SandboxReconciler::Count(int ReconcilerStats::*field) {
  std::lock_guard lock(mu_);
  ++(stats_.*field);
}

std::optional<MonoTime> SandboxReconciler::WriteDeadline(const Pass& p) {
  if (!options_.write_fence) return p.deadline;
  if (const auto until = options_.write_fence()) return std::min(p.deadline, *until);
  Count(&ReconcilerStats::fenced);
  return std::nullopt;
}

ReconcileResult SandboxReconciler::Reconcile(const ObjectKey& key) {
  const auto [ns, name] = key.Unpacked();
  // Every record of this pass carries the controller, this pass's id and the key.
  const log::ReconcileScope scope("sandbox", ns, name);
  Count(&ReconcilerStats::reconciles);
  Pass p;
  p.deadline = time_.MonotonicNow() + options_.pass_budget;
  ReconcileResult result = Run(p, ns, name);
  if (result.next == ReconcileResult::Next::kRetry) result.retry_after_seconds = p.retry_after;
  log::Debug("reconciled")
      .Str("verdict", p.verdict)
      .Str("action", p.action)
      .Str("result", ToString(result.next));
  return result;
}

std::vector<ObjectKey> SandboxReconciler::KeysAtStart() {
  return journal_.Read([](const domain::JournalState& s) {
    std::vector<ObjectKey> keys;
    for (const auto& [seq, intent] : s.pending_intents) keys.push_back({intent.ns, intent.name});
    for (const auto& [uid, r] : s.sandboxes) keys.push_back({r.ns.str(), r.name.str()});
    return keys;
  });
}

void SandboxReconciler::Idle() {
  // Never waits for readers; a no-op when nothing was written
  // (docs/design.md#growth-with-changes-not-time). A failure is no key's: the
  // WAL just stays until the next idle moment, and the journal reports write
  // failures itself (journal_metrics.h), so the result is dropped here.
  (void)journal_.Checkpoint();
  // The batches just committed held each sandbox's snapshot, and a rollout's
  // answers and bodies are freed too; glibc would keep all of it resident.
  // Once per burst that recorded something, by whichever worker gets here
  // first: an idle moment after nothing new costs nothing.
  const int64_t seq = journal_.Read([](const domain::JournalState& s) { return s.last_seq; });
  if (returned_at_seq_.exchange(seq) != seq && options_.return_freed_memory)
    options_.return_freed_memory();
}

void SandboxReconciler::Cancel() { client_.Stop(); }

kube::ApiResult SandboxReconciler::Pass::Noted(kube::ApiResult r) {
  if (const auto seconds = kube::ApiErrorOf(r.status()).retry_after_seconds)
    retry_after = std::max<int64_t>(retry_after.value_or(0), *seconds);
  return r;
}

ReconcileResult SandboxReconciler::Run(Pass& p, const std::string& ns, const std::string& name) {
  if (!ResolvePending(p, ns, name)) return ReconcileResult::Retry();
  if (Status s = kube::CheckObjectName(ns, name); !s.ok()) {
    log::Error("skipping sandbox; nothing is sent for it").Error(s.message());
    return ReconcileResult::Done();
  }
  SandboxPtr sandbox = cache_.Sandbox(ns, name);
  const ReconcileResult forgot = ForgetReplaced(p, ns, name, sandbox ? sandbox->uid.str() : "");
  if (!sandbox || forgot.next != ReconcileResult::Next::kDone) return forgot;
  for (int round = 0; round < options_.max_rounds; ++round) {
    if (!sandbox) return ReconcileResult::Done();  // gone: nothing to fence
    Round r = Evaluate(p, ns, name, *sandbox);
    if (!r.fresh) return r.result;
    // 409: the object changed under us; decide again on what it is now
    sandbox = CompactOf(r.fresh, options_.sandbox_version);
  }
  return ReconcileResult::Retry();
}

// Intents of this key still without an outcome (a crash, a lost response, a
// journal that refused the outcome) are settled before the sandbox is
// evaluated again, so the intent rule sees the truth.
bool SandboxReconciler::ResolvePending(Pass& p, const std::string& ns, const std::string& name) {
  // A copy: settling changes the state.
  const std::vector<IntentRecord> pending = journal_.Read([&](const domain::JournalState& s) {
    std::vector<IntentRecord> out;
    for (const auto& [seq, intent] : s.pending_intents)
      if (intent.ns == ns && intent.name == name) out.push_back(intent);
    return out;
  });
  for (const IntentRecord& intent : pending) {
    Round r = Drive(p, intent, /*send_first=*/false);
    if (r.result.next != ReconcileResult::Next::kDone) return false;
    Count(&ReconcilerStats::resolved_intents);
  }
  return SettleResent(p, ns, name);
}

// A refused intent sent again whose result is unknown, or known applied but
// not journaled (the journal refused the outcome), is as open as a pending
// one, though the journal still says `failed`: it is read back before the
// sandbox is decided again, so a later pass on a changed (or lagging) object
// does not record a new intent for a sandbox the resend already suspended.
bool SandboxReconciler::SettleResent(Pass& p, const std::string& ns, const std::string& name) {
  std::optional<IntentRecord> resent;
  {
    std::lock_guard lock(mu_);
    if (auto it = resent_.find({ns, name}); it != resent_.end()) resent = it->second;
  }
  if (!resent) return true;
  const ReadBack rb = Read(p, *resent);
  if (rb.kind == ReadBack::Kind::kUnknown) return false;
  if (rb.kind == ReadBack::Kind::kSettled && rb.outcome.outcome == Outcome::kApplied &&
      Settle(*resent, rb.outcome, nullptr, /*known=*/true).result.next !=
          ReconcileResult::Next::kDone)
    return false;
  std::lock_guard lock(mu_);
  resent_.erase({ns, name});  // applied now, or it did not land: decide afresh
  return true;
}

domain::Snapshot SandboxReconciler::Observe(const kube::ParsedSandbox& sb) {
  const std::string& ns = sb.observation.ns;
  return Assemble(
      sb,
      [&](const char* policy_name, kube::PolicyRole) {
        PolicyPtr cached = cache_.Policy(ns, policy_name);
        return cached ? cached->Observation() : domain::PolicyObservation{};
      },
      [&](const std::string& pod_name) {
        PodPtr cached = pod_name.empty() ? nullptr : cache_.Pod(ns, pod_name);
        return cached ? ObservedPod{cached->Observation(), cached->labels} : ObservedPod{};
      },
      [&] {
        std::vector<domain::NamedPolicy> out;
        for (const auto& [name, cached] : cache_.Policies(ns))
          out.push_back({name, cached->uid.str(), cached->generation, cached->rules});
        return out;
      });
}

std::optional<domain::Snapshot> SandboxReconciler::ObserveLive(
    Pass& p, const kube::ParsedSandbox& sb, const std::vector<domain::WideningPolicy>& suspects) {
  const std::string& ns = sb.observation.ns;
  bool read_failed = false;
  // A live read, parsed fresh (the cached side holds compact structs).
  auto fetch = [&](CacheKind kind, const std::string& object_name) -> kube::ObjectPtr {
    if (object_name.empty()) return nullptr;
    const auto path = kind == CacheKind::kPods
                          ? kube::ObjectPath(kube::PodResource(), ns, object_name)
                          : kube::ObjectPath(kube::NetworkPolicyResource(), ns, object_name);
    if (!path.ok()) {  // e.g. a hostile pod-name annotation: no such object can exist
      log::Warn("not reading an object the sandbox names").Error(path.status().message());
      return nullptr;
    }
    const kube::ApiResult r = p.Noted(client_.Get(*path, p.Call()));
    if (kube::ApiErrorOf(r.status()).kind == kube::ApiErrorKind::kNotFound) return nullptr;
    kube::ObjectPtr obj = r.ok() ? kube::ParseObject(r->body) : nullptr;
    if (!obj) read_failed = true;
    return obj;
  };
  domain::Snapshot snap = Assemble(
      sb,
      [&](const char* policy_name, kube::PolicyRole role) {
        kube::ObjectPtr obj = fetch(CacheKind::kPolicies, policy_name);
        return kube::ObservePolicy(obj.get(), role, options_.boundary_port);
      },
      [&](const std::string& pod_name) {
        kube::ObjectPtr obj = fetch(CacheKind::kPods, pod_name);
        return ObservedPod{kube::ObservePod(obj.get()), kube::PodLabels(obj.get())};
      },
      [&] {
        std::vector<domain::NamedPolicy> out;
        for (const domain::WideningPolicy& suspect : suspects) {
          if (kube::ObjectPtr obj = fetch(CacheKind::kPolicies, suspect.name))
            out.push_back(kube::ObserveNamedPolicy(*obj, options_.boundary_port));
        }
        return out;
      });
  if (read_failed) return std::nullopt;
  return snap;
}

domain::Snapshot SandboxReconciler::Assemble(
    const kube::ParsedSandbox& sb,
    const std::function<domain::PolicyObservation(const char*, kube::PolicyRole)>& policy,
    const std::function<ObservedPod(const std::string&)>& pod,
    const std::function<std::vector<domain::NamedPolicy>()>& policies) {
  domain::Snapshot snap;
  snap.sandbox = sb.observation;
  snap.observed_at_ms = time_.NowMs();
  snap.workload_fence = policy(domain::kWorkloadPolicyName, kube::PolicyRole::kWorkload);
  snap.supervisor_fence = policy(domain::kSupervisorPolicyName, kube::PolicyRole::kSupervisor);
  const ObservedPod workload = pod(sb.workload_pod_name);
  snap.workload_pod = workload.pod;
  snap.supervisor_pod = pod(sb.supervisor_pod_name).pod;
  // Only the workload pod's gate is decision-relevant (row 1a); keeping the
  // supervisor's would record an observation when OpenShell un-gates it.
  snap.supervisor_pod.scheduling_gated = false;
  // What other policies select the workload by: its pod's labels, or, while
  // it has no pod, the labels its template will give it. Both are owned by
  // the workload pod's name (common/label_set.h).
  const LabelSet& labels = workload.pod.present ? workload.labels : sb.template_labels;
  snap.bypass = domain::WideningPolicies(
      policies(), [&](const std::string& key) { return labels.Get(key, sb.workload_pod_name); });
  snap.history = journal_.Read(
      [&](const domain::JournalState& s) { return domain::history_for(s, snap.sandbox.uid); });
  snap.dry_run = options_.enforcement.DryRunIn(sb.observation.ns);
  return snap;
}

// The journal remembers a uid under this name that the cache does not hold
// there (deleted; or deleted and re-created, seen in one batch or while
// fencekeeper was down). A live read confirms it is gone before it is
// forgotten: a lagging cache must not erase a history.
ReconcileResult SandboxReconciler::ForgetReplaced(Pass& p, const std::string& ns,
                                                  const std::string& name,
                                                  const std::string& cached_uid) {
  const std::vector<std::string> remembered = journal_.Read([&](const domain::JournalState& s) {
    std::vector<std::string> out;
    for (const CompactString& uid : domain::uids_named(s, {ns, name}))
      if (uid != cached_uid) out.push_back(uid.str());
    return out;
  });
  if (remembered.empty()) return ReconcileResult::Done();
  // A name the API server cannot have issued names nothing in the cluster:
  // no request, nothing lives under it.
  std::string live_uid;
  if (const auto path = kube::SandboxPath(options_.sandbox_version, ns, name); path.ok()) {
    const kube::ApiResult r = p.Noted(client_.Get(*path, p.Call()));
    if (r.ok()) {
      live_uid = kube::UidOf(r->body);
      if (live_uid.empty()) return ReconcileResult::Retry();
    } else if (kube::ApiErrorOf(r.status()).kind != kube::ApiErrorKind::kNotFound) {
      return ReconcileResult::Retry();
    }
  }
  for (const std::string& uid : remembered) {
    if (uid == live_uid) continue;  // still there: the cache lags
    const std::string why =
        live_uid.empty() ? "deleted from the cluster" : "name now belongs to uid " + live_uid;
    if (!Forget(uid, why).ok()) return ReconcileResult::Retry();
    log::Info("sandbox forgotten").Uid(uid).Str("why", why);
    std::lock_guard lock(mu_);
    checked_marks_.erase(uid);
  }
  return ReconcileResult::Done();
}

bool SandboxReconciler::AgreeWithServer(const kube::ParsedSandbox& sandbox) {
  const std::string& uid = sandbox.observation.uid;
  if (!sandbox.mark) return true;
  {
    std::lock_guard lock(mu_);
    if (auto it = checked_marks_.find(uid);
        it != checked_marks_.end() && it->second == *sandbox.mark)
      return true;
  }
  auto found = journal_.FindIntent(sandbox.mark->seq);
  if (!found.ok()) return false;
  const auto& f = *found;
  const bool ours = f && f->intent.uid == uid && MarkOf(f->intent) == *sandbox.mark;
  // Pending intents are settled by ResolvePending, which read the object first.
  const bool settled_otherwise = ours && f->latest && f->latest->outcome != Outcome::kApplied;
  if (settled_otherwise) {
    log::Info("the sandbox carries an intent the journal did not record as applied")
        .Seq(f->intent.seq)
        .Str("outcome", domain::ToString(f->latest->outcome));
    const Round r = Settle(
        f->intent, AppliedOnObject(f->intent, sandbox.observation, "seen carrying the intent"),
        nullptr, /*known=*/true);
    if (r.result.next != ReconcileResult::Next::kDone) return false;
  }
  if (ours && !f->latest) return true;  // pending: not settled yet, look again
  std::lock_guard lock(mu_);
  checked_marks_[uid] = *sandbox.mark;
  return true;
}

SandboxReconciler::Round SandboxReconciler::Evaluate(Pass& p, const std::string& ns,
                                                     const std::string& name,
                                                     const kube::CachedSandbox& sandbox) {
  if (!sandbox.error.empty()) {
    log::Warn("skipping sandbox").Error(sandbox.error.str());
    return {ReconcileResult::Done(), nullptr};  // its next change re-enqueues it
  }
  const kube::ParsedSandbox parsed = sandbox.Parsed(ns, name);
  if (!AgreeWithServer(parsed)) return {ReconcileResult::Retry(), nullptr};
  domain::Snapshot snap = Observe(parsed);
  domain::Decision decision = domain::decide(snap);
  p.Decided(decision);
  if (NeedsLiveConfirmation(snap, decision) && !Confirm(p, parsed, snap, decision))
    return {ReconcileResult::Retry(), nullptr};  // nothing recorded, nothing sent
  // An intent is recorded only when it can be sent at once.
  if (decision.action == Action::kPatchSuspend && !WriteDeadline(p))
    return {ReconcileResult::Retry(), nullptr};

  domain::Evaluation eval{snap, decision, parsed.resource_version, options_.writer_id};
  auto recorded = Record(eval);
  if (!recorded.ok())
    return {ReconcileResult::Retry(), nullptr};  // nothing durable, so nothing sent
  if (recorded->appended > 0 && decision.verdict == Verdict::kHold) LogHeld(snap, decision);
  if (recorded->hold_started_seq && events_) {
    // Once per hold episode: the journal says when one starts, so neither a
    // later pass nor a restart repeats it (docs/design.md#held-sandboxes).
    const domain::SandboxObservation& sb = snap.sandbox;
    events_->Publish({sb.ns, sb.name, sb.uid, sb.api_version, domain::ToString(decision.reason),
                      decision.note.str(), *recorded->hold_started_seq,
                      FailClosedEvent::Kind::kHeld});
  }
  if (recorded->dry_run_seq) WouldSuspend(snap, decision, *recorded->dry_run_seq);
  if (recorded->retry) return Resend(p, ns, name, *recorded->retry);
  if (!recorded->intent) {
    if (decision.verdict == Verdict::kAdmitting && decision.reevaluate_at_ms) {
      const int64_t wait_ms = std::max<int64_t>(1, *decision.reevaluate_at_ms - time_.NowMs());
      return {ReconcileResult::After(std::chrono::milliseconds(wait_ms)), nullptr};
    }
    return {ReconcileResult::Done(), nullptr};
  }
  return Drive(p, *recorded->intent, /*send_first=*/true);
}

// A dry-run intent was recorded (with its outcome): its one warning and one
// Event, and nothing sent to the sandbox.
void SandboxReconciler::WouldSuspend(const domain::Snapshot& snap, const domain::Decision& decision,
                                     int64_t seq) {
  Count(&ReconcilerStats::dry_runs);
  LogWouldSuspend(snap, decision, seq);
  if (!events_) return;
  const domain::SandboxObservation& sb = snap.sandbox;
  events_->Publish({sb.ns, sb.name, sb.uid, sb.api_version, domain::ToString(decision.reason),
                    decision.note.str(), seq, FailClosedEvent::Kind::kWouldSuspend});
}

// A suspend verdict resting on a cache that may lag, checked with live reads:
// true (and `snap`, `decision` replaced by the live ones) when they bear it out.
bool SandboxReconciler::Confirm(Pass& p, const kube::ParsedSandbox& parsed, domain::Snapshot& snap,
                                domain::Decision& decision) {
  Count(&ReconcilerStats::confirmations);
  std::optional<domain::Snapshot> live = ObserveLive(p, parsed, snap.bypass);
  if (!live) return false;  // cannot confirm
  domain::Decision live_decision = domain::decide(*live);
  if (live_decision.action != decision.action) {
    Count(&ReconcilerStats::unconfirmed);
    log::Info("the cache said suspend, the live objects do not; waiting for the cache")
        .Str("note", decision.note);
    return false;
  }
  snap = std::move(*live);
  decision = std::move(live_decision);
  p.Decided(decision);
  return true;
}

// A refusal that persists: the refused intent is sent again (read first, so
// a resend that landed before a crash is found applied, not resent). While its
// result is not journaled it is remembered, for SettleResent.
SandboxReconciler::Round SandboxReconciler::Resend(Pass& p, const std::string& ns,
                                                   const std::string& name,
                                                   const IntentRecord& refused) {
  Round r = Drive(p, refused, /*send_first=*/false);
  std::lock_guard lock(mu_);
  if (r.result.next == ReconcileResult::Next::kDone || r.fresh) {
    resent_.erase({ns, name});
  } else {
    resent_[{ns, name}] = refused;
  }
  return r;
}

// Sends the intent's PATCH (or, for a pending one, reads first) until its
// result is known: docs/design.md#lost-answers-and-conflicts.
SandboxReconciler::Round SandboxReconciler::Drive(Pass& p, const IntentRecord& intent,
                                                  bool send_first) {
  const auto path = kube::SandboxPath(intent.intent.api_version, intent.ns, intent.name);
  if (!path.ok()) {
    // A name the API server cannot have issued (a damaged journal): no such
    // sandbox exists, so the intent is settled without sending anything.
    log::Error("settling a journaled intent without a request")
        .Seq(intent.seq)
        .Error(path.status().message());
    return Settle(intent, {Outcome::kSuperseded, std::nullopt, path.status().message()}, nullptr);
  }
  bool send = send_first;
  for (int sends = 0;;) {
    if (send && options_.enforcement.DryRunIn(intent.ns)) {
      // An intent an enforcing run journaled (pending, or refused and due
      // again) meets a run with enforcement off there: off means nothing is
      // sent (seed 12873). Settled, the sandbox gets its dry-run record; a
      // run that enforces again decides it afresh.
      log::Info("not sending a journaled intent: enforcement is off in its namespace (dry run)")
          .Seq(intent.seq);
      return Settle(intent,
                    {Outcome::kSuperseded, std::nullopt,
                     "enforcement is off in namespace " + intent.ns + " (dry run): not sent again"},
                    nullptr);
    }
    if (send) {
      if (sends >= options_.max_identical_patches) return {ReconcileResult::Retry(), nullptr};
      const std::optional<MonoTime> deadline = WriteDeadline(p);
      if (!deadline) return {ReconcileResult::Retry(), nullptr};
      ++sends;
      Count(&ReconcilerStats::patches);
      const kube::ApiResult r =
          p.Noted(client_.MergePatch(*path, IntentBody(intent), {*deadline, nullptr}));
      if (r.ok()) {
        const std::optional<domain::Evaluation> observed = ObservedAfterPatch(intent, r->body);
        return Settle(intent, {Outcome::kApplied, kube::GenerationOf(r->body), ""}, nullptr,
                      /*known=*/false, observed ? &*observed : nullptr);
      }
      if (DefiniteRefusal(r)) {
        const bool gone = kube::ApiErrorOf(r.status()).kind == kube::ApiErrorKind::kNotFound;
        return Settle(intent,
                      gone ? SuspendOutcome{Outcome::kSuperseded, std::nullopt,
                                            "sandbox deleted before the PATCH"}
                           : SuspendOutcome{Outcome::kFailed, std::nullopt, r.status().message()},
                      nullptr);
      }
      log::Info("suspend result unknown; reading the sandbox")
          .Seq(intent.seq)
          .Error(r.status().message());
    }
    ReadBack rb = Read(p, intent);
    if (rb.kind == ReadBack::Kind::kUnknown)
      return {ReconcileResult::Retry(), nullptr};  // stays pending
    if (rb.kind == ReadBack::Kind::kSendAgain) {
      send = true;
      continue;
    }
    return Settle(intent, rb.outcome, rb.fresh);
  }
}

SandboxReconciler::ReadBack SandboxReconciler::Read(Pass& p, const IntentRecord& intent) {
  const auto path = kube::SandboxPath(intent.intent.api_version, intent.ns, intent.name);
  if (!path.ok()) return {};  // Drive settles these before reading
  const kube::ApiResult r = p.Noted(client_.Get(*path, p.Call()));
  if (kube::ApiErrorOf(r.status()).kind == kube::ApiErrorKind::kNotFound) {
    return {ReadBack::Kind::kSettled,
            {Outcome::kSuperseded, std::nullopt, "sandbox no longer exists"},
            nullptr};
  }
  kube::ObjectPtr obj = r.ok() ? kube::ParseObject(r->body) : nullptr;
  auto parsed = obj ? kube::ParseSandbox(*obj, intent.intent.api_version)
                    : Result<kube::ParsedSandbox>(
                          Status::IOError(r.ok() ? "not a JSON object" : r.status().message()));
  if (!parsed.ok()) {
    log::Warn("cannot read the sandbox to settle an intent; will retry")
        .Seq(intent.seq)
        .Error(parsed.status().message());
    return {};
  }
  const auto& now = parsed->observation;
  if (now.uid != intent.uid) {
    return {ReadBack::Kind::kSettled,
            {Outcome::kSuperseded, std::nullopt, "sandbox was recreated (new uid)"},
            nullptr};
  }
  // Seq and writer: a seq alone may be another journal's (a replaced volume,
  // a restored backup, the other replica's journal).
  if (parsed->mark == MarkOf(intent)) {
    return {ReadBack::Kind::kSettled,
            AppliedOnObject(intent, now, "confirmed by reading the sandbox"), nullptr};
  }
  if (parsed->resource_version == intent.intent.resource_version)
    return {ReadBack::Kind::kSendAgain, {}, nullptr};
  return {ReadBack::Kind::kSettled,
          {Outcome::kConflict, std::nullopt,
           "sandbox changed before the PATCH landed (resourceVersion " +
               intent.intent.resource_version + " -> " + parsed->resource_version + ")"},
          obj};
}

std::optional<domain::Evaluation> SandboxReconciler::ObservedAfterPatch(const IntentRecord& intent,
                                                                        const std::string& body) {
  kube::ObjectPtr obj = kube::ParseObject(body);
  if (!obj) return std::nullopt;
  auto parsed = kube::ParseSandbox(*obj, intent.intent.api_version);
  if (!parsed.ok() || parsed->observation.uid != intent.uid) return std::nullopt;
  // No decide() here: the commit re-derives history and decision with the
  // outcome folded in (domain::plan_observed_after_outcome).
  return domain::Evaluation{Observe(*parsed), {}, parsed->resource_version, options_.writer_id};
}

SandboxReconciler::Round SandboxReconciler::Settle(const IntentRecord& intent,
                                                   const SuspendOutcome& outcome,
                                                   kube::ObjectPtr fresh, bool known,
                                                   const domain::Evaluation* observed) {
  if (!RecordOutcome(intent.seq, outcome, known ? &intent : nullptr, observed).ok())
    return {ReconcileResult::Retry(), nullptr};  // stays pending
  const std::string reason = domain::ToString(intent.intent.reason);
  if (metrics_) metrics_->Transition(reason, domain::ToString(outcome.outcome));
  // One warning per fail-closed transition, when its suspend is known to have landed.
  LogSettled(intent, outcome,
             journal_.Read([&](const domain::JournalState& s) { return FenceOf(s, intent.uid); }));
  switch (outcome.outcome) {
    case Outcome::kApplied:
      Count(&ReconcilerStats::warnings);
      Count(&ReconcilerStats::applied);
      if (events_) {
        events_->Publish({intent.ns, intent.name, intent.uid, intent.intent.api_version, reason,
                          intent.intent.note, intent.seq});
      }
      return {ReconcileResult::Done(), nullptr};
    case Outcome::kFailed:
      Count(&ReconcilerStats::failures);
      return {ReconcileResult::Retry(), nullptr};
    case Outcome::kConflict:
      Count(&ReconcilerStats::conflicts);
      {
        // With the object read back, the next round runs on it at once.
        const ReconcileResult next = fresh ? ReconcileResult::Done() : ReconcileResult::Retry();
        return {next, std::move(fresh)};
      }
    default:
      Count(&ReconcilerStats::superseded);
      return {ReconcileResult::Done(), nullptr};
  }
}

// Every journal write of a pass goes through here: a refused one turns
// readiness false (and is counted); only a write that really committed
// (`appended` > 0) proves the journal writable again — an evaluation that
// appends nothing, or a refusal recorded before, commits nothing and says
// nothing about the disk.
void SandboxReconciler::Journaled(const Status& status, size_t appended, MonoTime start,
                                  const char* failure) {
  const double seconds = std::chrono::duration<double>(time_.MonotonicNow() - start).count();
  std::lock_guard lock(mu_);
  if (status.ok()) {
    if (appended == 0) return;
    if (metrics_) metrics_->JournalAppend(seconds);
    if (!journal_ok_) log::Info("journal is writable again").Str("journal", journal_.path());
    journal_ok_ = true;
    return;
  }
  if (journal_ok_ && failure) log::Error(failure).Str("journal", journal_.path()).Error(status);
  journal_ok_ = false;
  if (metrics_) metrics_->JournalError();
  ++stats_.journal_errors;
}

Result<journal::Recorded> SandboxReconciler::Record(const domain::Evaluation& eval) {
  const MonoTime start = time_.MonotonicNow();
  auto r = journal_.Record(eval);
  Journaled(r.status(), r.ok() ? r->appended : 0, start,
            "journal write failed; no PATCH is sent until it is durable");
  return r;
}

Result<int64_t> SandboxReconciler::RecordOutcome(int64_t seq, const SuspendOutcome& outcome,
                                                 const IntentRecord* known,
                                                 const domain::Evaluation* observed) {
  const MonoTime start = time_.MonotonicNow();
  auto r = journal_.RecordOutcome(seq, outcome, known, observed);
  if (!r.ok()) {
    log::Error(
        "cannot record an intent's outcome; it stays pending and is settled by reading the "
        "sandbox once the journal takes writes")
        .Seq(seq)
        .Str("outcome", domain::ToString(outcome.outcome))
        .Error(r.status());
  }
  Journaled(r.status(), r.ok() && *r != 0 ? 1 : 0, start, /*failure=*/nullptr);  // logged above
  return r;
}

Result<size_t> SandboxReconciler::Forget(const std::string& uid, const std::string& why) {
  const MonoTime start = time_.MonotonicNow();
  auto r = journal_.Forget(uid, why);
  Journaled(r.status(), r.ok() ? *r : 0, start,
            "journal write failed; a deleted sandbox is forgotten once it is durable");
  return r;
}

}  // namespace fk::reconciler
