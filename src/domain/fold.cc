#include <algorithm>
#include <functional>

#include "domain/fold.h"

namespace fk::domain {
namespace {

SandboxRecord& RecordFor(JournalState& state, const Event& e) {
  auto [it, added] = state.sandboxes.try_emplace(CompactString(e.uid));
  SandboxRecord& r = it->second;
  std::optional<NamespacedName> before;
  if (!added) before = NamespacedName{r.ns, r.name};
  r.uid = it->first;
  r.ns =
      CompactString(e.ns);  // a sandbox keeps its uid; name and namespace follow the newest event
  r.name = CompactString(e.name);
  r.updated_at = CompactString(e.recorded_at);
  if (added || before->ns != r.ns || before->name != r.name) reindex_sandbox(state, e.uid, before);
  return r;
}

struct Folder {
  JournalState& state;
  const Event& e;

  void operator()(const Leadership&) {}     // audit only: no decision depends on it
  void operator()(const Pruned&) {}         // what went is in the base state already
  void operator()(const WriterStarted&) {}  // audit only: the mode reaches decide() in Snapshot

  void operator()(const FenceObserved& f) {
    FenceRecord& r = state.fences[{e.ns, f.policy}];
    SortedNames<int64_t> seen = std::move(r.max_generation);
    r = FenceRecord{e.ns, f.policy, f.observation, e.seq, e.recorded_at, std::move(seen)};
    if (f.observation.present) {
      int64_t& g = r.max_generation[f.observation.uid];
      g = std::max(g, f.observation.generation);
    }
  }
  void operator()(const SandboxObserved& o) {
    SandboxRecord& r = RecordFor(state, e);
    r.observation = std::make_shared<const Snapshot>(o.snapshot);
    r.observed = DigestOf(o.snapshot);
    r.observation_seq = e.seq;
  }
  void operator()(const Decided& d) {
    SandboxRecord& r = RecordFor(state, e);
    r.decision = d.decision;
    r.decision_seq = e.seq;
    // A hold over a sandbox other than the one the last episode began with begins one.
    if (d.decision.verdict == Verdict::kHold && r.observed && r.held_sandbox != r.observed->sandbox)
      r.held_sandbox = r.observed->sandbox;
  }
  void operator()(const Forgotten&) {
    if (auto it = state.sandboxes.find(e.uid); it != state.sandboxes.end()) {
      const NamespacedName before = {it->second.ns, it->second.name};
      state.sandboxes.erase(it);
      reindex_sandbox(state, e.uid, before);
    }
    std::erase_if(state.pending_intents, [&](const auto& p) { return p.second.uid == e.uid; });
  }
  void operator()(const SuspendIntent& i) {
    SandboxRecord& r = RecordFor(state, e);
    r.history.pending_intent_seq = e.seq;
    r.refused.reset();  // a new intent is recorded only when something changed
    state.pending_intents[e.seq] = IntentRecord{e.seq, e.ns, e.name, e.uid, i};
  }
  void operator()(const SuspendOutcome& o) {
    std::optional<IntentRecord> intent;
    if (auto it = state.pending_intents.find(e.ref_seq); it != state.pending_intents.end()) {
      intent = it->second;
      state.pending_intents.erase(it);
    }
    SandboxRecord& r = RecordFor(state, e);
    if (r.history.pending_intent_seq == e.ref_seq) r.history.pending_intent_seq.reset();
    // A refused intent that was sent again gets a later outcome of its own.
    if (r.refused && r.refused->intent.seq == e.ref_seq) {
      intent = r.refused->intent;
      r.refused.reset();
    }
    if (o.outcome == Outcome::kFailed && intent) r.refused = RefusedIntent{*intent, o};
    // Only an applied suspend blocks later PATCHes; conflict, failed and
    // superseded leave the sandbox free to be decided again.
    if (o.outcome == Outcome::kApplied && o.applied_generation) {
      r.history.applied_generation = std::max(
          r.history.applied_generation.value_or(*o.applied_generation), *o.applied_generation);
    }
    if (o.outcome == Outcome::kDryRun && intent) {
      const int64_t g = intent->intent.observed_generation;
      r.history.dry_run_generation = std::max(r.history.dry_run_generation.value_or(g), g);
    }
  }
};

}  // namespace

void reindex_sandbox(JournalState& state, const std::string& uid,
                     const std::optional<NamespacedName>& before) {
  const CompactString packed(uid);
  if (before) state.uids_by_name.Erase(HashOfName(before->ns.str(), before->name.str()), packed);
  if (auto r = state.sandboxes.find(packed); r != state.sandboxes.end())
    state.uids_by_name.Insert(HashOfName(r->second.ns.str(), r->second.name.str()), packed);
}

std::vector<CompactString> uids_named(const JournalState& state, const NamespacedName& name) {
  std::vector<CompactString> out;
  state.uids_by_name.ForEach(
      HashOfName(name.ns.str(), name.name.str()), [&](const CompactString& uid) {
        auto r = state.sandboxes.find(uid);
        // Another name of the same hash: not this one's.
        if (r != state.sandboxes.end() && r->second.ns == name.ns && r->second.name == name.name)
          out.push_back(uid);
      });
  std::sort(out.begin(), out.end());
  return out;
}

void fold(JournalState& state, const Event& event) {
  std::visit(Folder{state, event}, event.body);
  state.last_seq = std::max(state.last_seq, event.seq);
}

SuspendHistory history_for(const JournalState& state, const std::string& sandbox_uid) {
  auto it = state.sandboxes.find(sandbox_uid);
  return it == state.sandboxes.end() ? SuspendHistory{} : it->second.history;
}

void seed_held_sandbox(SandboxRecord& record) {
  if (record.decision && record.decision->verdict == Verdict::kHold && record.observed)
    record.held_sandbox = record.observed->sandbox;
}

}  // namespace fk::domain
