// The state one group-commit batch is planned against (journal/batch_state.h):
// planning against it sees what planning against the committed state would,
// the committed state is untouched until MergeInto, which then leaves it as
// if every event had been folded into it directly; only the records a plan
// reads are copied, and a record the batch erased does not come back.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "domain/decision.h"
#include "domain/fold.h"
#include "domain/journal_state.h"
#include "journal/batch_state.h"
#include "test_support.h"

namespace fk::journal {
namespace {
using domain::Event;
using domain::JournalState;

domain::Evaluation Evaluate(const domain::Snapshot& snap) {
  return domain::Evaluation{snap, domain::decide(snap), "7"};
}

// As the journal appends: each event gets the next seq, then is folded.
std::vector<Event> Append(JournalState& state, std::vector<Event> events) {
  for (Event& e : events) {
    e.seq = state.last_seq + 1;
    e.recorded_at = "2026-01-01T00:00:00.000Z";
    domain::fold(state, e);
  }
  return events;
}
std::vector<Event> Append(BatchState& batch, std::vector<Event> events) {
  for (Event& e : events) {
    e.seq = batch.scratch().last_seq + 1;
    e.recorded_at = "2026-01-01T00:00:00.000Z";
    batch.Fold(e);
  }
  return events;
}

Event OfSandbox(const std::string& ns, const std::string& name, domain::EventBody body,
                int64_t ref_seq = 0) {
  Event e;
  e.ns = ns;
  e.name = name;
  e.uid = "uid-" + ns + "-" + name;
  e.ref_seq = ref_seq;
  e.body = std::move(body);
  return e;
}

template <class Map>
std::set<typename Map::key_type> Keys(const Map& m) {
  std::set<typename Map::key_type> out;
  for (const auto& [k, v] : m) out.insert(k);
  return out;
}
// The sandboxes' uids, as text.
template <class V>
std::set<std::string> Keys(const std::map<CompactString, V, std::less<>>& m) {
  std::set<std::string> out;
  for (const auto& [k, v] : m) out.insert(k.str());
  return out;
}

// sb-1 healthy and sb-2 suspended-to-be (its intent pending) in "agents",
// fence generation 2; sb-3 healthy in "other".
class BatchStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    domain::Snapshot one = fk::testing::HealthySnapshot("sb-1");
    one.workload_fence.generation = 2;
    one.sandbox.fence_generation = 2;
    Append(committed_, domain::plan_events(committed_, Evaluate(one)));
    auto two = Append(
        committed_, domain::plan_events(committed_, Evaluate(fk::testing::StaleSnapshot("sb-2"))));
    ASSERT_EQ(two.back().kind(), domain::EventKind::kSuspendIntent);
    intent_seq_ = two.back().seq;
    Append(committed_, domain::plan_events(
                           committed_, Evaluate(fk::testing::HealthySnapshot("sb-3", "other"))));
    ASSERT_EQ(committed_.pending_intents.size(), 1u);
  }

  JournalState committed_;
  int64_t intent_seq_ = 0;
};

TEST_F(BatchStateTest, AMergedBatchIsTheCommittedStateWithItsEventsFolded) {
  JournalState reference = committed_;  // every event folded straight into it
  const JournalState before = committed_;
  BatchState batch(committed_);

  // The fence rolls to generation 3 under sb-1: a fence event and an intent.
  domain::Snapshot one = fk::testing::StaleSnapshot("sb-1");
  one.workload_fence.generation = 3;
  const domain::Evaluation eval = Evaluate(one);
  const auto planned = domain::plan_events(batch.For(eval), eval);
  EXPECT_EQ(planned, domain::plan_events(reference, eval));
  ASSERT_EQ(planned.front().kind(), domain::EventKind::kFenceObserved);
  Append(reference, planned);
  const int64_t new_intent = Append(batch, planned).back().seq;
  // sb-2's pending intent is applied.
  const std::vector<Event> outcome = {OfSandbox(
      "agents", "sb-2", domain::SuspendOutcome{domain::Outcome::kApplied, 3, ""}, intent_seq_)};
  batch.For(outcome);
  Append(reference, outcome);
  Append(batch, outcome);
  // sb-3 is gone.
  const std::vector<Event> forgotten = {OfSandbox("other", "sb-3", domain::Forgotten{"deleted"})};
  batch.For(forgotten);
  Append(reference, forgotten);
  Append(batch, forgotten);

  EXPECT_EQ(batch.changed_fences(),
            (std::set<BatchState::FenceKey>{{"agents", domain::kWorkloadPolicyName}}));
  EXPECT_EQ(batch.changed_sandboxes(),
            (std::set<std::string>{"uid-agents-sb-1", "uid-agents-sb-2", "uid-other-sb-3"}));
  EXPECT_EQ(committed_, before);  // nothing changes before COMMIT
  std::move(batch).MergeInto(committed_);
  EXPECT_EQ(committed_, reference);
  EXPECT_EQ(Keys(committed_.pending_intents), std::set<int64_t>{new_intent});
}

TEST_F(BatchStateTest, PlanningCopiesOnlyTheRecordsItReads) {
  BatchState batch(committed_);
  const JournalState& s = batch.For(Evaluate(fk::testing::HealthySnapshot("sb-1")));
  EXPECT_EQ(s.last_seq, committed_.last_seq);
  EXPECT_EQ(Keys(s.fences),
            (std::set<JournalState::NameKey>{{"agents", domain::kSupervisorPolicyName},
                                             {"agents", domain::kWorkloadPolicyName}}));
  EXPECT_EQ(Keys(s.sandboxes), std::set<std::string>{"uid-agents-sb-1"});
  EXPECT_TRUE(s.pending_intents.empty());
  EXPECT_EQ(s.sandboxes.at(fk::CompactString("uid-agents-sb-1")),
            committed_.sandboxes.at(fk::CompactString("uid-agents-sb-1")));
  // A sandbox's record comes with its pending intents.
  batch.ForSandbox("uid-agents-sb-2");
  EXPECT_EQ(Keys(s.pending_intents), std::set<int64_t>{intent_seq_});
  EXPECT_EQ(Keys(s.sandboxes), (std::set<std::string>{"uid-agents-sb-1", "uid-agents-sb-2"}));
  // Nothing folded: merging changes nothing.
  const JournalState before = committed_;
  std::move(batch).MergeInto(committed_);
  EXPECT_EQ(committed_, before);
}

// A refused intent is no longer pending: it is found through its sandbox.
TEST_F(BatchStateTest, AnIntentIsFoundPendingOrRefused) {
  BatchState pending(committed_);
  EXPECT_EQ(Keys(pending.ForIntent(intent_seq_).pending_intents), std::set<int64_t>{intent_seq_});
  EXPECT_EQ(Keys(pending.scratch().sandboxes), std::set<std::string>{"uid-agents-sb-2"});

  Append(committed_,
         {OfSandbox("agents", "sb-2", domain::SuspendOutcome{domain::Outcome::kFailed, {}, "403"},
                    intent_seq_)});
  ASSERT_TRUE(committed_.pending_intents.empty());
  ASSERT_TRUE(committed_.sandboxes.at(fk::CompactString("uid-agents-sb-2")).refused);
  BatchState refused(committed_);
  const JournalState& s = refused.ForIntent(intent_seq_);
  EXPECT_TRUE(s.pending_intents.empty());
  ASSERT_EQ(Keys(s.sandboxes), std::set<std::string>{"uid-agents-sb-2"});
  EXPECT_EQ(s.sandboxes.at(fk::CompactString("uid-agents-sb-2")).refused->intent.seq, intent_seq_);
}

// Forgetting a sandbox drops it and its pending intents; a later member of
// the same batch that reads it finds it gone, not copied back from the
// committed state, and the merge drops it there too.
TEST_F(BatchStateTest, ASandboxForgottenInTheBatchStaysGone) {
  BatchState batch(committed_);
  const std::vector<Event> forgotten = {OfSandbox("agents", "sb-2", domain::Forgotten{"deleted"})};
  batch.For(forgotten);
  Append(batch, forgotten);
  EXPECT_FALSE(batch.scratch().sandboxes.contains("uid-agents-sb-2"));
  EXPECT_TRUE(batch.scratch().pending_intents.empty());
  batch.ForSandbox("uid-agents-sb-2");
  batch.ForIntent(intent_seq_);
  batch.For(Evaluate(fk::testing::StaleSnapshot("sb-2")));
  EXPECT_FALSE(batch.scratch().sandboxes.contains("uid-agents-sb-2"));
  EXPECT_TRUE(batch.scratch().pending_intents.empty());
  std::move(batch).MergeInto(committed_);
  EXPECT_FALSE(committed_.sandboxes.contains("uid-agents-sb-2"));
  EXPECT_TRUE(committed_.pending_intents.empty());
  EXPECT_TRUE(domain::uids_named(committed_, {"agents", "sb-2"}).empty());
  EXPECT_TRUE(committed_.sandboxes.contains("uid-agents-sb-1"));
}

}  // namespace
}  // namespace fk::journal
