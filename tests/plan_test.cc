// domain/plan.h without a journal: the events an outcome or a deleted
// sandbox appends are planned from the folded state alone (the journal only
// assigns seq and time, and stores them).
#include <gtest/gtest.h>

#include "domain/fold.h"
#include "domain/plan.h"
#include "test_support.h"

namespace fk::domain {
namespace {

class PlanTest : public ::testing::Test {
 protected:
  // What the journal does with planned events: seq, then fold.
  void Append(std::vector<Event> events) {
    for (Event& e : events) {
      e.seq = state_.last_seq + 1;
      fold(state_, e);
    }
  }
  // A stale sandbox recorded with its suspend intent; returns the intent's seq.
  int64_t StaleWithIntent(const std::string& name) {
    const Snapshot s = testing::StaleSnapshot(name);
    Append(plan_events(state_, {s, decide(s), "100"}));
    return state_.last_seq;
  }
  JournalState state_;
};

TEST_F(PlanTest, AnOutcomeSettlesAPendingIntentAndARepeatedRefusalPlansNothing) {
  const int64_t intent = StaleWithIntent("sb-1");
  ASSERT_TRUE(state_.pending_intents.contains(intent));
  const SuspendOutcome refused{Outcome::kFailed, std::nullopt, "Forbidden (HTTP 403)"};
  auto first = plan_outcome(state_, intent, refused, nullptr);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ(first->front().ref_seq, intent);
  EXPECT_EQ(first->front().uid, "uid-agents-sb-1");
  EXPECT_TRUE(outcome_has_intent(state_, first->front()));
  Append(*first);
  ASSERT_NE(find_refused(state_, intent), nullptr);

  auto again = plan_outcome(state_, intent, refused, nullptr);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE(again->empty()) << "the same refusal again appends nothing";
  SuspendOutcome other = refused;
  other.detail = "Forbidden (HTTP 403): another webhook";
  EXPECT_EQ(plan_outcome(state_, intent, other, nullptr)->size(), 1u) << "a new refusal is news";
  auto applied = plan_outcome(state_, intent, {Outcome::kApplied, 2, ""}, nullptr);
  ASSERT_TRUE(applied.ok());
  EXPECT_EQ(applied->size(), 1u) << "a refused intent sent again can still land";
}

TEST_F(PlanTest, AnOutcomeOfNoKnownIntentIsRefusedUnlessAnObjectCarriesItApplied) {
  const int64_t intent = StaleWithIntent("sb-1");
  Append(*plan_outcome(state_, intent, {Outcome::kApplied, 2, ""}, nullptr));
  EXPECT_EQ(plan_outcome(state_, intent, {Outcome::kApplied, 2, ""}, nullptr).status().code(),
            Code::kInvalidArgument)
      << "settled: neither pending nor refused";
  EXPECT_EQ(
      plan_outcome(state_, 999, {Outcome::kFailed, std::nullopt, "x"}, nullptr).status().code(),
      Code::kInvalidArgument);
  const IntentRecord known{intent, "agents", "sb-1", "uid-agents-sb-1", {}};
  auto carried = plan_outcome(state_, intent, {Outcome::kApplied, 3, ""}, &known);
  ASSERT_TRUE(carried.ok()) << carried.status().ToString();
  EXPECT_EQ(carried->size(), 1u);
  EXPECT_FALSE(plan_outcome(state_, intent, {Outcome::kFailed, std::nullopt, "x"}, &known).ok())
      << "only an applied outcome is taken from an object";
}

// The sandbox an applied PATCH returned is planned against the state with
// the outcome folded: its history says "applied", so the decision is the one
// the next pass will reach, and that pass has nothing left to record.
TEST_F(PlanTest, TheObjectAnAppliedPatchReturnedIsPlannedAfterItsOutcome) {
  const int64_t intent = StaleWithIntent("sb-1");
  Snapshot suspended = testing::StaleSnapshot("sb-1");
  suspended.sandbox.should_run = false;
  suspended.sandbox.generation += 1;
  suspended.history = history_for(state_, suspended.sandbox.uid);  // still pending here
  const Evaluation returned{suspended, decide(suspended), "101"};
  Append(*plan_outcome(state_, intent, {Outcome::kApplied, suspended.sandbox.generation, ""},
                       nullptr));

  const std::vector<Event> planned = plan_observed_after_outcome(state_, returned);
  ASSERT_EQ(planned.size(), 2u);
  const auto* observed = std::get_if<SandboxObserved>(&planned[0].body);
  ASSERT_NE(observed, nullptr);
  EXPECT_EQ(observed->snapshot.history.applied_generation, suspended.sandbox.generation);
  EXPECT_FALSE(observed->snapshot.history.pending_intent_seq) << "history after the outcome";
  EXPECT_TRUE(std::holds_alternative<Decided>(planned[1].body));
  Append(planned);

  Snapshot next_pass = suspended;
  next_pass.history = history_for(state_, suspended.sandbox.uid);
  EXPECT_TRUE(plan_events(state_, {next_pass, decide(next_pass), "101"}).empty());
}

// A returned object that would need another PATCH (resumed at a newer
// generation before the answer) records nothing: only a pass that can send
// an intent at once records one.
TEST_F(PlanTest, AReturnedObjectThatWouldNeedAnotherPatchIsLeftToTheNextPass) {
  const int64_t intent = StaleWithIntent("sb-1");
  Append(*plan_outcome(state_, intent, {Outcome::kApplied, 1, ""}, nullptr));
  Snapshot resumed = testing::StaleSnapshot("sb-1");
  resumed.sandbox.generation = 5;
  ASSERT_EQ(decide([&] {
              Snapshot s = resumed;
              s.history = history_for(state_, s.sandbox.uid);
              return s;
            }())
                .action,
            Action::kPatchSuspend);
  EXPECT_TRUE(plan_observed_after_outcome(state_, {resumed, decide(resumed), "102"}).empty());
}

TEST_F(PlanTest, ForgettingSupersedesEachPendingIntentThenForgetsTheSandbox) {
  const int64_t intent = StaleWithIntent("sb-1");
  StaleWithIntent("sb-2");
  const std::vector<Event> events = plan_forget(state_, "uid-agents-sb-1", "deleted");
  ASSERT_EQ(events.size(), 2u);
  const auto* superseded = std::get_if<SuspendOutcome>(&events[0].body);
  ASSERT_NE(superseded, nullptr);
  EXPECT_EQ(superseded->outcome, Outcome::kSuperseded);
  EXPECT_EQ(events[0].ref_seq, intent);
  EXPECT_TRUE(std::holds_alternative<Forgotten>(events[1].body));
  Append(events);
  EXPECT_FALSE(state_.sandboxes.contains("uid-agents-sb-1"));
  EXPECT_EQ(state_.pending_intents.size(), 1u) << "sb-2's intent stays";
  EXPECT_TRUE(plan_forget(state_, "uid-agents-sb-1", "again").empty()) << "unknown: nothing";
}

}  // namespace
}  // namespace fk::domain
