#include "memory_journal.h"

#include <algorithm>
#include <optional>

#include "domain/fold.h"
#include "domain/plan.h"
#include "journal/text_bound.h"

namespace fk::testing {
using domain::Event;

void MemoryJournal::ReadState(const std::function<void(const domain::JournalState&)>& fn) const {
  std::shared_lock lock(mu_);
  fn(state_);
}

std::vector<Event> MemoryJournal::events() const {
  std::shared_lock lock(mu_);
  return events_;
}

Result<std::vector<Event>> MemoryJournal::Commit(const Plan& plan, const Plan& follow_up) {
  std::unique_lock lock(mu_);
  auto planned = plan(state_);
  if (!planned.ok() || planned->empty()) return planned;
  if (refuse_ && refuse_()) return Status::IOError(path_ + ": write refused (injected fault)");
  const std::string now = FormatRfc3339(clock_.Now());
  // With a follow-up, folded into a copy: it plans against the events before
  // it, and the state changes only once the whole commit is known.
  std::optional<domain::JournalState> copy;
  if (follow_up) copy = state_;
  domain::JournalState& next = copy ? *copy : state_;
  auto fold_from = [&](std::vector<Event>& events, size_t from) {
    for (size_t i = from; i < events.size(); ++i) {
      journal::BoundEventText(events[i]);  // as stored, so a repeated refusal compares equal
      events[i].seq = next.last_seq + 1;
      events[i].recorded_at = now;
      domain::fold(next, events[i]);
    }
  };
  fold_from(*planned, 0);
  if (follow_up) {
    const size_t first = planned->size();
    if (auto more = follow_up(next); more.ok())
      planned->insert(planned->end(), more->begin(), more->end());
    fold_from(*planned, first);
  }
  if (copy) state_ = std::move(*copy);
  events_.insert(events_.end(), planned->begin(), planned->end());
  ++commits_;
  return planned;
}

Result<journal::Recorded> MemoryJournal::Record(const domain::Evaluation& evaluation) {
  journal::Recorded r;
  bool hold_started = false;
  Plan dry_run;
  if (evaluation.decision.action == domain::Action::kRecordDryRun) {
    dry_run = [&](const domain::JournalState& s) -> Result<std::vector<Event>> {
      return domain::plan_dry_run_outcome(s, evaluation);
    };
  }
  auto events = Commit(
      [&](const domain::JournalState& s) -> Result<std::vector<Event>> {
        r.retry = domain::refused_to_retry(s, evaluation);
        hold_started = domain::starts_hold_episode(s, evaluation);
        return domain::plan_events(s, evaluation);
      },
      dry_run);
  if (!events.ok()) return events.status();
  journal::NoteRecorded(r, evaluation, *events, hold_started);
  return r;
}

Result<int64_t> MemoryJournal::RecordOutcome(int64_t intent_seq,
                                             const domain::SuspendOutcome& outcome,
                                             const domain::IntentRecord* known,
                                             const domain::Evaluation* observed) {
  Event stored_event;
  stored_event.body = outcome;
  journal::BoundEventText(stored_event);
  const auto stored = std::get<domain::SuspendOutcome>(stored_event.body);
  Plan follow_up;
  if (observed && outcome.outcome == domain::Outcome::kApplied) {
    follow_up = [&](const domain::JournalState& s) -> Result<std::vector<Event>> {
      return domain::plan_observed_after_outcome(s, *observed);
    };
  }
  auto events = Commit(
      [&](const domain::JournalState& s) {
        return domain::plan_outcome(s, intent_seq, stored, known);
      },
      follow_up);
  if (!events.ok()) return events.status();
  return events->empty() ? int64_t{0} : events->front().seq;
}

Result<std::optional<journal::FoundIntent>> MemoryJournal::FindIntent(int64_t seq) const {
  std::shared_lock lock(mu_);
  std::optional<journal::FoundIntent> found;
  for (const Event& e : events_) {
    if (const auto* i = std::get_if<domain::SuspendIntent>(&e.body); i && e.seq == seq)
      found = journal::FoundIntent{domain::IntentRecord{e.seq, e.ns, e.name, e.uid, *i}, {}};
    if (const auto* o = std::get_if<domain::SuspendOutcome>(&e.body);
        o && found && e.ref_seq == seq)
      found->latest = *o;
  }
  return found;
}

Result<size_t> MemoryJournal::Forget(const std::string& uid, const std::string& detail) {
  auto events = Commit([&](const domain::JournalState& s) -> Result<std::vector<Event>> {
    return domain::plan_forget(s, uid, detail);
  });
  if (!events.ok()) return events.status();
  return events->size();
}

}  // namespace fk::testing
