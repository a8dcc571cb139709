// journal::JournalWriter in memory: the SQLite journal's planning
// (domain/plan.h), text bounds (journal/text_bound.h) and folding
// (domain/fold.h) over a vector of events, without a file. For reconciler unit
// tests; end-to-end tests, the simulation and everything about durability
// stay on journal::Journal. Like the real journal it can be told to refuse
// writes, and it outlives the reconcilers that use it (a "restart" keeps it).
#pragma once

#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "journal/journal_writer.h"

namespace fk::testing {

class MemoryJournal final : public journal::JournalWriter {
 public:
  explicit MemoryJournal(TimeSource& clock) : clock_(clock) {}

  Result<journal::Recorded> Record(const domain::Evaluation& evaluation) override;
  Result<int64_t> RecordOutcome(int64_t intent_seq, const domain::SuspendOutcome& outcome,
                                const domain::IntentRecord* known = nullptr,
                                const domain::Evaluation* observed = nullptr) override;
  Result<std::optional<journal::FoundIntent>> FindIntent(int64_t seq) const override;
  Result<size_t> Forget(const std::string& uid, const std::string& detail) override;
  Status Checkpoint() override { return Status::Ok(); }
  const std::string& path() const override { return path_; }

  // Whether a write fails now (as journal::OpenOptions::refuse_writes).
  void RefuseWrites(std::function<bool()> refuse) { refuse_ = std::move(refuse); }
  // Every event appended, in seq order; the state, for a test that is the
  // journal's only user.
  std::vector<domain::Event> events() const;
  const domain::JournalState& state() const { return state_; }
  // Commits that appended something (as the SQLite journal's stats().commits).
  uint64_t commits() const {
    std::shared_lock lock(mu_);
    return commits_;
  }

 protected:
  void ReadState(const std::function<void(const domain::JournalState&)>& fn) const override;

 private:
  using Plan = std::function<Result<std::vector<domain::Event>>(const domain::JournalState&)>;
  // Plans against the state and appends what `plan` returns, then what
  // `follow_up` plans against the state with those folded, as one commit.
  Result<std::vector<domain::Event>> Commit(const Plan& plan, const Plan& follow_up = nullptr);

  TimeSource& clock_;
  const std::string path_ = ":memory:";
  std::function<bool()> refuse_;
  mutable std::shared_mutex mu_;
  domain::JournalState state_;
  std::vector<domain::Event> events_;
  uint64_t commits_ = 0;
};

}  // namespace fk::testing
