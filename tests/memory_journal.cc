#include "memory_journal.h"

#include <algorithm>

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

Result<std::vector<Event>> MemoryJournal::Commit(
    const std::function<Result<std::vector<Event>>(const domain::JournalState&)>& plan) {
  std::unique_lock lock(mu_);
  auto planned = plan(state_);
  if (!planned.ok() || planned->empty()) return planned;
  if (refuse_ && refuse_()) return Status::IOError(path_ + ": write refused (injected fault)");
  const std::string now = FormatRfc3339(clock_.Now());
  for (Event& e : *planned) {
    journal::BoundEventText(e);  // as stored, so that a repeated refusal compares equal
    e.seq = state_.last_seq + 1;
    e.recorded_at = now;
    domain::fold(state_, e);
    events_.push_back(e);
  }
  return planned;
}

Result<journal::Recorded> MemoryJournal::Record(const domain::Evaluation& evaluation) {
  journal::Recorded r;
  bool hold_started = false;
  auto events = Commit([&](const domain::JournalState& s) -> Result<std::vector<Event>> {
    r.retry = domain::refused_to_retry(s, evaluation);
    hold_started = domain::starts_hold_episode(s, evaluation);
    return domain::plan_events(s, evaluation);
  });
  if (!events.ok()) return events.status();
  r.appended = events->size();
  for (const Event& e : *events) {
    if (const auto* intent = std::get_if<domain::SuspendIntent>(&e.body)) {
      r.intent_seq = e.seq;
      r.intent = domain::IntentRecord{e.seq, e.ns, e.name, e.uid, *intent};
    }
    if (hold_started && e.kind() == domain::EventKind::kDecided) r.hold_started_seq = e.seq;
  }
  return r;
}

Result<int64_t> MemoryJournal::RecordOutcome(int64_t intent_seq,
                                             const domain::SuspendOutcome& outcome,
                                             const domain::IntentRecord* known) {
  Event stored_event;
  stored_event.body = outcome;
  journal::BoundEventText(stored_event);
  const auto stored = std::get<domain::SuspendOutcome>(stored_event.body);
  auto events = Commit([&](const domain::JournalState& s) {
    return domain::plan_outcome(s, intent_seq, stored, known);
  });
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
