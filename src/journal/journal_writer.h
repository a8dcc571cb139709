// What a reconciler needs of the journal, and nothing more: read the folded
// state, record an evaluation, an intent's outcome or a forgotten sandbox,
// find an intent, and checkpoint when idle. journal::Journal implements it on
// SQLite (durable, group-committed); tests/memory_journal.h implements it in
// memory with the same planning (domain/plan.h) and folding (domain/fold.h),
// so that a reconciler's unit test needs no file. End-to-end tests stay on
// SQLite.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>

#include "common/status.h"
#include "domain/event.h"
#include "domain/journal_state.h"
#include "domain/plan.h"

namespace fk::journal {

// What recording one evaluation did.
struct Recorded {
  size_t appended = 0;
  std::optional<int64_t> intent_seq;  // set when the evaluation issued an intent
  // The intent recorded (seq intent_seq), as the state holds it while pending.
  std::optional<domain::IntentRecord> intent;
  // Set instead when the evaluation repeats a refused intent (see
  // domain::refused_to_retry): send that intent's PATCH again, nothing new
  // was recorded.
  std::optional<domain::IntentRecord> retry;
  // The volume is short of space and the evaluation recorded no intent:
  // it was shed (nothing appended, the state unchanged).
  bool shed = false;
  // The evaluation started a hold episode (domain::starts_hold_episode):
  // the seq of the `decided` row that records the hold, for its Event.
  std::optional<int64_t> hold_started_seq;
  // The evaluation recorded a dry-run intent (with its `dry-run` outcome, in
  // the same commit): its seq, for the warning and the Event. Nothing to send.
  std::optional<int64_t> dry_run_seq;
};

// Fills in what `events`, appended for `evaluation`, recorded (both journals).
inline void NoteRecorded(Recorded& r, const domain::Evaluation& evaluation,
                         const std::vector<domain::Event>& events, bool hold_started) {
  r.appended = events.size();
  for (const domain::Event& e : events) {
    if (const auto* intent = std::get_if<domain::SuspendIntent>(&e.body)) {
      if (evaluation.decision.action == domain::Action::kRecordDryRun) {
        r.dry_run_seq = e.seq;
      } else {
        r.intent_seq = e.seq;
        r.intent = domain::IntentRecord{e.seq, e.ns, e.name, e.uid, *intent};
      }
    }
    if (hold_started && e.kind() == domain::EventKind::kDecided) r.hold_started_seq = e.seq;
  }
}

// An intent and its latest outcome (none: still pending).
struct FoundIntent {
  domain::IntentRecord intent;
  std::optional<domain::SuspendOutcome> latest;
};

class JournalWriter {
 public:
  virtual ~JournalWriter() = default;

  // Runs `fn` on the state: what it sees is committed and does not change
  // while it runs. `fn` must not call back into the journal.
  template <class Fn>
  auto Read(Fn&& fn) const -> std::invoke_result_t<Fn&, const domain::JournalState&> {
    using R = std::invoke_result_t<Fn&, const domain::JournalState&>;
    if constexpr (std::is_void_v<R>) {
      ReadState([&](const domain::JournalState& s) { fn(s); });
    } else {
      std::optional<R> out;
      ReadState([&](const domain::JournalState& s) { out.emplace(fn(s)); });
      return std::move(*out);
    }
  }

  // Records one evaluation (domain::plan_events). Unchanged evaluations
  // append nothing.
  virtual Result<Recorded> Record(const domain::Evaluation& evaluation) = 0;
  // Records the outcome of a pending intent, or of a refused intent that was
  // sent again. Returns the outcome's seq, or 0 when the outcome repeats the
  // refusal already recorded for that intent (same outcome, same detail): a
  // refusal that persists is recorded once.
  //
  // `known` (from FindIntent) lets an `applied` outcome settle an intent that
  // is neither pending nor refused — one whose latest outcome is `conflict` or
  // `failed` but that an object is seen carrying after all: the journal agrees
  // with the server (docs/transitions.md#the-journal-agrees-with-the-server).
  //
  // `observed`: the sandbox as the PATCH returned it, recorded in the same
  // commit after an `applied` outcome (domain::plan_observed_after_outcome),
  // so a transition costs two commits, the intent's and this one. Dropped
  // when the outcome is not `applied`, or while a short volume sheds
  // observations: the next pass records it then.
  virtual Result<int64_t> RecordOutcome(int64_t intent_seq, const domain::SuspendOutcome& outcome,
                                        const domain::IntentRecord* known = nullptr,
                                        const domain::Evaluation* observed = nullptr) = 0;
  // Intent `seq` and its latest outcome; nullopt when `seq` is not an intent
  // of this journal.
  virtual Result<std::optional<FoundIntent>> FindIntent(int64_t seq) const = 0;
  // The sandbox with this uid is gone from the cluster: `superseded` for each
  // of its pending intents and a `forgotten` event, together; it leaves the
  // state. Returns the number of events appended (0 for an unknown uid).
  virtual Result<size_t> Forget(const std::string& uid, const std::string& detail) = 0;
  // Called when idle: the SQLite journal folds its WAL into the main file
  // (kBusy, never a wait, when a reader holds an older snapshot).
  virtual Status Checkpoint() = 0;
  // Where it lives, for log records ("journal.db", ":memory:").
  virtual const std::string& path() const = 0;

 protected:
  virtual void ReadState(const std::function<void(const domain::JournalState&)>& fn) const = 0;
};

}  // namespace fk::journal
