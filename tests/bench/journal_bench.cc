// Durable intents (issue 10): intents (and outcomes) committed per second by
// concurrent callers through the journal's group commit, against this
// machine's single-commit limit — one transaction and one WAL fsync per call
// (synchronous=FULL) — measured in the same run, on the same disk. Goal:
// ratio >= 5. The journal lives under $TMPDIR (a real disk, not /dev/shm:
// an fsync there costs nothing and would say nothing).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "domain/decision.h"
#include "domain/journal_state.h"
#include "journal/journal.h"
#include "test_support.h"

namespace {
using fk::journal::Journal;
using fk::journal::JournalStats;

std::unique_ptr<Journal> OpenJournal(const fk::testing::TempDir& dir) {
  auto j = Journal::Open(dir.File("journal.db"));
  if (!j.ok()) {
    std::fprintf(stderr, "cannot open the journal: %s\n", j.status().ToString().c_str());
    std::abort();
  }
  return std::move(*j);
}

// A sandbox whose fence rolled from generation 1 to 2: recording its
// evaluation appends an observation, a decision and an intent.
fk::domain::Evaluation Stale(const std::string& name) {
  fk::domain::Snapshot s = fk::testing::HealthySnapshot(name);
  s.workload_fence.generation = 2;
  return {s, fk::domain::decide(s), "100"};
}

// The limit: `n` intents recorded one after another by one thread, each its
// own transaction and fsync. Returns the seconds they took.
double SingleCommitsSeconds(Journal& j, const std::string& prefix, int n) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    if (!j.Record(Stale(prefix + std::to_string(i))).ok()) std::abort();
  }
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count();
}

// Runs `call(thread, i)` for i < per_thread on each of `threads` threads;
// returns the wall-clock seconds from the first start to the last return.
double RunConcurrently(int threads, int per_thread, const std::function<void(int, int)>& call) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) call(t, i);
    });
  }
  for (auto& th : pool) th.join();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return took.count();
}

constexpr int kLimitCommits = 64;  // single commits per round, for the limit
constexpr int kCallsPerRound = 512;

// Batched calls and single commits timed over the rounds of one benchmark.
struct Rates {
  int64_t rounds = 0;
  int64_t calls = 0;
  double seconds = 0;
  double single_seconds = 0;
  void Add(double took, int64_t n) {
    ++rounds;
    calls += n;
    seconds += took;
  }
  double per_s() const { return calls / seconds; }
  double limit_per_s() const { return rounds * kLimitCommits / single_seconds; }
};

void Accumulate(JournalStats& total, const JournalStats& before, const JournalStats& after) {
  total.commits += after.commits - before.commits;
  total.calls += after.calls - before.calls;
}

// Reports the batched rate (named `what`) against the single-commit limit.
void Report(benchmark::State& state, const char* what, const Rates& rates,
            const JournalStats& batched) {
  state.counters[what] = rates.per_s();
  state.counters["limit_single_commits_per_s"] = rates.limit_per_s();
  state.counters["ratio"] = rates.per_s() / rates.limit_per_s();
  state.counters["goal_ratio"] = 5;
  state.counters["calls_per_commit"] =
      batched.commits > 0 ? static_cast<double>(batched.calls) / batched.commits : 0;
}

// (a) The machine's fsync limit on its own: one caller, one commit per intent.
void BM_SingleCommits(benchmark::State& state) {
  const fk::testing::TempDir dir;
  auto j = OpenJournal(dir);
  int64_t n = 0;
  for (auto _ : state) {
    auto r = j->Record(Stale("sandbox-" + std::to_string(n++)));
    if (!r.ok() || !r->intent_seq) state.SkipWithError("Record failed");
  }
  state.counters["commits_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SingleCommits)->UseRealTime()->Unit(benchmark::kMillisecond);

// The intent seq recorded for stale sandbox `prefix`t-i (0 on failure).
int64_t RecordStale(Journal& j, const std::string& prefix, int t, int i) {
  auto r = j.Record(Stale(prefix + std::to_string(t) + "-" + std::to_string(i)));
  return r.ok() && r->intent_seq ? *r->intent_seq : 0;
}

// A batched benchmark over `state.range(0)` threads. Each round `prepare`
// readies the round (untimed), the limit is measured (single commits,
// untimed) and `call(prefix, t, i)` runs on every thread (timed): the limit
// and the batched rate see the same load on a shared machine.
using Call = std::function<bool(const std::string& prefix, int t, int i)>;
void RunRounds(
    benchmark::State& state, Journal& j, const char* what,
    const std::function<void(const std::string& prefix, int threads, int per_thread)>& prepare,
    const Call& call) {
  const int threads = static_cast<int>(state.range(0));
  const int per_thread = std::max(1, kCallsPerRound / threads);
  std::atomic<int> failures{0};
  Rates rates;
  JournalStats batched;
  for (auto _ : state) {
    const std::string prefix = "r" + std::to_string(rates.rounds) + "-";
    prepare(prefix, threads, per_thread);
    rates.single_seconds += SingleCommitsSeconds(j, prefix + "limit-", kLimitCommits);
    const JournalStats before = j.stats();
    const double took = RunConcurrently(
        threads, per_thread, [&](int t, int i) { failures += call(prefix, t, i) ? 0 : 1; });
    Accumulate(batched, before, j.stats());
    state.SetIterationTime(took);
    rates.Add(took, threads * per_thread);
  }
  if (failures > 0) state.SkipWithError("a call failed");
  Report(state, what, rates, batched);
}

// (b) Intents recorded by `threads` concurrent callers, distinct sandboxes.
void BM_BatchedIntents(benchmark::State& state) {
  const fk::testing::TempDir dir;
  auto j = OpenJournal(dir);
  RunRounds(
      state, *j, "intents_per_s", [](const std::string&, int, int) {},
      [&](const std::string& prefix, int t, int i) { return RecordStale(*j, prefix, t, i) != 0; });
}
BENCHMARK(BM_BatchedIntents)
    ->ArgName("threads")
    ->Arg(4)
    ->Arg(16)
    ->Arg(64)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

// Outcomes of pending intents recorded by `threads` concurrent callers (the
// intents are recorded first, untimed).
void BM_BatchedOutcomes(benchmark::State& state) {
  const fk::testing::TempDir dir;
  auto j = OpenJournal(dir);
  std::vector<std::vector<int64_t>> seqs;
  auto record_intents = [&](const std::string& prefix, int threads, int per_thread) {
    seqs.assign(threads, std::vector<int64_t>(per_thread));
    RunConcurrently(threads, per_thread, [&](int t, int i) {
      if (!(seqs[t][i] = RecordStale(*j, prefix, t, i))) std::abort();
    });
  };
  RunRounds(state, *j, "outcomes_per_s", record_intents, [&](const std::string&, int t, int i) {
    const fk::domain::SuspendOutcome applied{fk::domain::Outcome::kApplied, 3, ""};
    return j->RecordOutcome(seqs[t][i], applied).ok();
  });
}
BENCHMARK(BM_BatchedOutcomes)
    ->ArgName("threads")
    ->Arg(16)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
