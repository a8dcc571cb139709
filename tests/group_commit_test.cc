// Group commit in the journal (issue 10): calls from many threads are
// committed together, each returns only once its own events are durable, a
// batch plans each call against the calls ahead of it, and a failed batch
// fails every call in it and changes nothing.
//
// The tests make batches deterministic through the journal's write hook
// (OpenOptions::refuse_writes, consulted by a batch's leader before its
// transaction): one batch is held there until a known set of callers has
// queued behind it, and those callers then form the next batch.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "domain/fold.h"
#include "fault_vfs.h"
#include "journal/journal.h"
#include "test_support.h"

namespace fk::journal {
namespace {
using namespace fk::domain;
using fk::testing::Eventually;
using fk::testing::TempDir;

// A running sandbox of `ns` admitted under fence generation 1 while the
// fence is at 2: deciding it issues an intent.
Evaluation StaleEvaluation(const std::string& name, const std::string& ns = "agents") {
  Snapshot s = testing::HealthySnapshot(name, ns);
  s.workload_fence.generation = 2;
  return {s, decide(s), "100"};
}

Evaluation HealthyEvaluation(const std::string& name, const std::string& ns = "agents") {
  Snapshot s = testing::HealthySnapshot(name, ns);
  return {s, decide(s), "100"};
}

class GroupCommitTest : public ::testing::Test {
 protected:
  GroupCommitTest() : clock_(std::chrono::system_clock::from_time_t(1'800'000'000)) {}

  void Open(const std::string& vfs = "", size_t max_batch_calls = 128) {
    OpenOptions o;
    o.clock = &clock_;
    o.vfs = vfs;
    o.max_batch_calls = max_batch_calls;
    o.refuse_writes = [this] { return OnWrite(); };
    auto j = Journal::Open(path_, o);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
  }

  // The write hook: holds the batch `hold_write_` until `hold_until_queued_`
  // calls are queued (itself included), then asks `on_write_` whether to fail it.
  bool OnWrite() {
    const int n = ++writes_;
    if (n == hold_write_) {
      EXPECT_TRUE(Eventually([&] { return journal_->stats().queued >= hold_until_queued_; }));
    }
    return on_write_ ? on_write_(n) : false;
  }

  // Runs `first` on a thread; once its batch is held before its commit, runs
  // each of `rest` on a thread of its own: they all queue behind it and are
  // committed together as the next batch. Returns when every call returned.
  void FirstThenBatch(const std::function<void()>& first,
                      const std::vector<std::function<void()>>& rest) {
    hold_write_ = writes_ + 1;
    hold_until_queued_ = 1 + rest.size();
    std::vector<std::thread> threads;
    threads.emplace_back(first);
    EXPECT_TRUE(Eventually([&] { return writes_ == hold_write_; }));  // first is held
    for (const auto& call : rest) threads.emplace_back(call);
    for (auto& t : threads) t.join();
  }

  // Calls recording a stale sandbox each (names `prefix`0..n-1 in `ns`);
  // each keeps its result in results_[name].
  std::vector<std::function<void()>> StaleRecords(int n, const std::string& prefix,
                                                  const std::string& ns = "agents") {
    std::vector<std::function<void()>> calls;
    for (int i = 0; i < n; ++i) {
      calls.emplace_back([this, name = prefix + std::to_string(i), ns] {
        auto r = journal_->Record(StaleEvaluation(name, ns));
        std::lock_guard lock(results_mu_);
        results_.emplace(name, r);
      });
    }
    return calls;
  }

  int64_t Count(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }

  JournalState Committed() {
    return journal_->Read([](const JournalState& s) { return s; });
  }

  TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  ManualTimeSource clock_;
  std::unique_ptr<Journal> journal_;
  std::atomic<int> writes_{0};
  std::atomic<int> hold_write_{0};
  std::atomic<uint64_t> hold_until_queued_{0};
  std::function<bool(int)> on_write_;
  std::mutex results_mu_;
  std::map<std::string, Result<Recorded>> results_;
};

// Two sandboxes of one namespace that see the same new fence generation in
// one batch record the fence observation once; seqs stay contiguous.
TEST_F(GroupCommitTest, ABatchPlansEachCallAgainstTheCallsAheadOfIt) {
  Open();
  constexpr int kBatch = 8;
  FirstThenBatch([&] { ASSERT_TRUE(journal_->Record(HealthyEvaluation("first", "other")).ok()); },
                 StaleRecords(kBatch, "stale-"));
  ASSERT_EQ(results_.size(), size_t{kBatch});
  std::set<int64_t> intents;
  for (const auto& [name, r] : results_) {
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().ToString();
    ASSERT_TRUE(r->intent_seq) << name;
    EXPECT_EQ(r->intent->uid, "uid-agents-" + name);
    intents.insert(*r->intent_seq);
  }
  EXPECT_EQ(intents.size(), size_t{kBatch});

  const JournalStats stats = journal_->stats();
  EXPECT_EQ(stats.commits, 2u);  // the first call, then the whole batch at once
  EXPECT_EQ(stats.largest_batch, uint64_t{kBatch});
  // Both fence policies of "agents" once, not once per sandbox.
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'fence_observed' AND "
                  "namespace = 'agents'"),
            2);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'suspend_intent'"), kBatch);
  EXPECT_EQ(Count("SELECT max(seq) - min(seq) + 1 FROM events"),
            Count("SELECT count(*) FROM events"));
  EXPECT_EQ(static_cast<uint64_t>(Count("SELECT count(*) FROM events")), stats.events);

  // What the journal holds in memory is what folding its rows gives, and
  // what a restart loads.
  JournalState folded;
  ASSERT_TRUE(journal_
                  ->ForEachEvent(1, INT64_MAX,
                                 [&](const Event& e) {
                                   fold(folded, e);
                                   return Status::Ok();
                                 })
                  .ok());
  EXPECT_TRUE(folded == Committed());
  const JournalState before = Committed();
  journal_.reset();
  Open();
  EXPECT_TRUE(journal_->state() == before);
}

// A batch takes at most max_batch_calls calls: eight calls queued behind a
// held one commit as 3 + 3 + 2, in queue order, each planned against the
// ones before it.
TEST_F(GroupCommitTest, ABatchTakesAtMostTheCapAndTheRestFollow) {
  Open("", 3);
  constexpr int kCalls = 8;
  FirstThenBatch([&] { ASSERT_TRUE(journal_->Record(HealthyEvaluation("first", "other")).ok()); },
                 StaleRecords(kCalls, "stale-"));
  ASSERT_EQ(results_.size(), size_t{kCalls});
  for (const auto& [name, r] : results_) {
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().ToString();
    EXPECT_TRUE(r->intent_seq) << name;
  }
  const JournalStats stats = journal_->stats();
  EXPECT_EQ(stats.largest_batch, 3u);
  EXPECT_EQ(stats.commits, 4u) << "the first call, then 3 + 3 + 2";
  EXPECT_EQ(stats.calls, uint64_t{kCalls + 1});
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'suspend_intent'"), kCalls);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'fence_observed' AND "
                  "namespace = 'agents'"),
            2)
      << "planned against the batches before: the fence once";
}

// N threads x M intents for distinct sandboxes, with a checkpointer and a
// reader running alongside: every intent is durable when its call returns,
// seqs are contiguous, and there are fewer commits than intents.
TEST_F(GroupCommitTest, ManyThreadsRecordManyIntentsInFewerCommits) {
  Open();
  constexpr int kThreads = 8, kPerThread = 25;
  std::atomic<bool> writing{true};
  std::thread checkpointer([&] {
    while (writing) {
      std::this_thread::yield();
      const Status s = journal_->Checkpoint();
      EXPECT_TRUE(s.ok() || s.code() == Code::kBusy) << s.ToString();
      // Every pending intent a reader sees has its row committed.
      const int64_t seen = journal_->Read([](const JournalState& s) { return s.last_seq; });
      EXPECT_LE(seen, Count("SELECT COALESCE(max(seq), 0) FROM events"));
    }
  });
  // A reader that touches nothing but Read(): it sees whole batches only
  // (each sandbox with an intent has its intent pending, within last_seq),
  // and never a state going back.
  std::thread reader([&] {
    int64_t last = 0;
    while (writing) {
      std::this_thread::yield();
      journal_->Read([&](const JournalState& s) {
        EXPECT_GE(s.last_seq, last);
        last = s.last_seq;
        for (const auto& [uid, r] : s.sandboxes) {
          if (!r.history.pending_intent_seq) continue;
          EXPECT_TRUE(s.pending_intents.contains(*r.history.pending_intent_seq)) << uid;
          EXPECT_LE(*r.history.pending_intent_seq, s.last_seq) << uid;
        }
        return 0;
      });
    }
  });
  std::vector<std::function<void()>> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (auto& call : StaleRecords(kPerThread, "t" + std::to_string(t) + "-")) call();
    });
  }
  // The first batch is held until every thread is queued: at least one
  // batch of all of them, whatever the disk's speed.
  FirstThenBatch(threads.front(), {threads.begin() + 1, threads.end()});
  writing = false;
  checkpointer.join();
  reader.join();

  ASSERT_EQ(results_.size(), size_t{kThreads * kPerThread});
  for (const auto& [name, r] : results_) {
    ASSERT_TRUE(r.ok()) << name << ": " << r.status().ToString();
    ASSERT_TRUE(r->intent_seq) << name;
  }
  const JournalStats stats = journal_->stats();
  EXPECT_LT(stats.commits, uint64_t{kThreads * kPerThread});
  // The other threads' first calls queued behind the held batch are
  // committed together (whether the first thread's next call joins them is
  // timing: it did not under ASan in CI).
  EXPECT_GE(stats.largest_batch, uint64_t{kThreads - 1});
  EXPECT_EQ(stats.failed_commits, 0u);
  journal_.reset();  // reopen and count rows
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'suspend_intent'"),
            kThreads * kPerThread);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'fence_observed'"), 2);
  EXPECT_EQ(Count("SELECT count(*) FROM events"), Count("SELECT max(seq) FROM events"));
  EXPECT_EQ(static_cast<uint64_t>(Count("SELECT count(*) FROM events")), stats.events);
  Open();
  EXPECT_EQ(journal_->state().pending_intents.size(), size_t{kThreads * kPerThread});
  for (const auto& [name, r] : results_)
    EXPECT_TRUE(journal_->state().pending_intents.contains(*r->intent_seq));
}

// A batch whose commit fails fails every call in it (including one that had
// nothing to append), appends nothing and leaves the state unchanged.
TEST_F(GroupCommitTest, AFailedCommitFailsEveryCallInItAndChangesNothing) {
  Open();
  ASSERT_TRUE(journal_->Record(HealthyEvaluation("unchanged")).ok());
  on_write_ = [](int n) { return n == 3; };  // the batch after the first
  JournalState before_batch;
  std::optional<Result<Recorded>> unchanged;
  auto rest = StaleRecords(5, "stale-");
  rest.emplace_back([&] { unchanged = journal_->Record(HealthyEvaluation("unchanged")); });
  FirstThenBatch(
      [&] {
        ASSERT_TRUE(journal_->Record(HealthyEvaluation("first", "other")).ok());
        before_batch = Committed();
      },
      rest);
  for (const auto& [name, r] : results_) {
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), Code::kIOError) << r.status().ToString();
  }
  ASSERT_TRUE(unchanged);
  EXPECT_FALSE(unchanged->ok());
  EXPECT_TRUE(Committed() == before_batch);
  EXPECT_EQ(Count("SELECT count(*) FROM events"), before_batch.last_seq);
  EXPECT_EQ(Count("SELECT count(*) FROM sandbox_projection"), 2);
  EXPECT_EQ(journal_->stats().failed_commits, 1u);

  // Nothing was lost: the same calls again record everything.
  results_.clear();
  for (auto& call : StaleRecords(5, "stale-")) call();
  for (const auto& [name, r] : results_) EXPECT_TRUE(r.ok() && r->intent_seq) << name;
  EXPECT_EQ(Count("SELECT max(seq) - min(seq) + 1 FROM events"),
            Count("SELECT count(*) FROM events"));
}

// A call whose own planning fails (an outcome for no intent) fails alone;
// the rest of its batch commits.
TEST_F(GroupCommitTest, APlanningErrorFailsOnlyItsCall) {
  Open();
  std::optional<Result<int64_t>> bogus;
  auto rest = StaleRecords(3, "stale-");
  rest.insert(rest.begin() + 1, [&] {
    bogus = journal_->RecordOutcome(9999, {Outcome::kApplied, 3, ""});
  });
  FirstThenBatch([&] { ASSERT_TRUE(journal_->Record(HealthyEvaluation("first")).ok()); }, rest);
  ASSERT_TRUE(bogus);
  ASSERT_FALSE(bogus->ok());
  EXPECT_EQ(bogus->status().code(), Code::kInvalidArgument);
  ASSERT_EQ(results_.size(), 3u);
  for (const auto& [name, r] : results_) EXPECT_TRUE(r.ok() && r->intent_seq) << name;
  EXPECT_EQ(journal_->stats().commits, 2u);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'suspend_outcome'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'suspend_intent'"), 3);
}

// Outcomes and forgets batch like intents, each planned against the calls
// ahead of it in the batch.
TEST_F(GroupCommitTest, OutcomesAndForgetsBatchLikeIntents) {
  Open();
  for (auto& call : StaleRecords(4, "stale-")) call();
  std::map<std::string, int64_t> intent;
  for (const auto& [name, r] : results_) intent[name] = *r->intent_seq;
  std::vector<std::function<void()>> rest;
  std::atomic<int> ok{0};
  for (const char* name : {"stale-0", "stale-1", "stale-2"}) {
    rest.emplace_back([&, seq = intent[name]] {
      ok += journal_->RecordOutcome(seq, {Outcome::kApplied, 3, ""}).ok();
    });
  }
  // The forget supersedes stale-3's pending intent in the same batch.
  rest.emplace_back([&] { ok += journal_->Forget("uid-agents-stale-3", "gone").ok(); });
  const uint64_t commits_before = journal_->stats().commits;
  FirstThenBatch([&] { ASSERT_TRUE(journal_->Record(HealthyEvaluation("first")).ok()); }, rest);
  EXPECT_EQ(ok, 4);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'suspend_outcome' AND "
                  "json_extract(payload, '$.outcome') = 'applied'"),
            3);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'suspend_outcome'"), 4);
  EXPECT_EQ(Count("SELECT count(*) FROM events WHERE kind = 'forgotten'"), 1);
  EXPECT_EQ(journal_->stats().commits, commits_before + 2);
  EXPECT_TRUE(Committed().pending_intents.empty());
  const JournalState before = Committed();
  journal_.reset();
  Open();
  EXPECT_TRUE(journal_->state() == before);
}

// No PATCH before its own intent is durable: power fails at the sync of a
// batch; every call in it fails, and every call that returned success is on
// disk after the reboot.
TEST_F(GroupCommitTest, NoCallReturnsBeforeItsCommitIsDurable) {
  testing::FaultVfs vfs;
  Open(vfs.name());
  on_write_ = [&](int n) {
    if (n == 2) vfs.CrashAtSync(1);  // the batch queued behind the first call
    return false;
  };
  int64_t first_intent = 0;
  FirstThenBatch(
      [&] {
        auto r = journal_->Record(StaleEvaluation("first", "other"));
        ASSERT_TRUE(r.ok() && r->intent_seq);
        first_intent = *r->intent_seq;
      },
      StaleRecords(6, "stale-"));
  ASSERT_TRUE(vfs.crashed());
  for (const auto& [name, r] : results_)
    EXPECT_FALSE(r.ok()) << name << " returned before its commit was durable";
  journal_.reset();
  vfs.LosePower(path_);
  Open(vfs.name());
  EXPECT_EQ(journal_->state().pending_intents.size(), 1u);
  EXPECT_TRUE(journal_->state().pending_intents.contains(first_intent));
  journal_.reset();  // before the VFS it was opened through goes
}

}  // namespace
}  // namespace fk::journal
