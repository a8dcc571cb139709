// Retention (issue 18, docs/retention.md), on an injected clock:
//   BM_PruneThroughput   rows pruned per second, with and without an archive
//                        (one file per step, synced), on the machine's disk;
//   BM_IntentLatencyWhilePruning
//                        p50/p99 of one durable intent while another thread
//                        prunes back to back, against the same without pruning;
//   BM_SimulatedYear     a year of 1,000 lifecycles a day under 30-day
//                        retention: the journal file's size at the end of each
//                        month (the curve), the steady state against the bound
//                        derived in docs/retention.md.
// A lifecycle here is the journal calls the controller makes for one sandbox
// created healthy, suspended by a fence roll and deleted (BM_JournalBytesPer-
// Lifecycle measures the same shape through the real controller).
#include <benchmark/benchmark.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "domain/fold.h"
#include "journal/journal.h"
#include "reconciler/retention.h"

namespace fk::bench {
namespace {
using namespace fk::domain;
namespace fs = std::filesystem;

std::unique_ptr<journal::Journal> Open(const std::string& path, const TimeSource& clock) {
  journal::OpenOptions o;
  o.clock = &clock;
  auto j = journal::Journal::Open(path, o);
  if (!j.ok()) {
    std::fprintf(stderr, "cannot open %s: %s\n", path.c_str(), j.status().ToString().c_str());
    std::abort();
  }
  return std::move(*j);
}

// One lifecycle; false if a call failed.
bool Lifecycle(journal::Journal& j, int64_t i) {
  Snapshot s = fk::testing::HealthySnapshot("sandbox-" + std::to_string(i % 100000));
  s.sandbox.uid = "0b1e2c3d-0000-4000-8000-" + std::to_string(100000000000 + i);
  s.history = history_for(j.state(), s.sandbox.uid);
  if (!j.Record(Evaluation{s, decide(s), "1"}).ok()) return false;
  s.workload_fence.generation = 2 + i;
  s.history = history_for(j.state(), s.sandbox.uid);
  auto r = j.Record(Evaluation{s, decide(s), "2"});
  if (!r.ok() || !r->intent_seq) return false;
  if (!j.RecordOutcome(*r->intent_seq, {Outcome::kApplied, 3, ""}).ok()) return false;
  return j.Forget(s.sandbox.uid, "deleted from the cluster").ok();
}

int64_t NowMs(const TimeSource& clock) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now().time_since_epoch())
      .count();
}

int64_t FileBytes(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  return db.execAndGet("PRAGMA page_count").getInt64() *
         db.execAndGet("PRAGMA page_size").getInt64();
}

// A journal on the machine's disk holding `lifecycles` lifecycles an hour
// old, and an empty archive directory beside it.
struct Filled {
  explicit Filled(int lifecycles) {
    fs::create_directory(archive);
    for (int i = 0; i < lifecycles && ok; ++i) ok = Lifecycle(*journal, i);
    clock.Advance(std::chrono::hours(1));
  }
  const fk::testing::TempDir dir{BenchDir()};
  const std::string archive = dir.File("archive");
  ManualTimeSource clock;
  std::unique_ptr<journal::Journal> journal = Open(dir.File("journal.db"), clock);
  bool ok = true;
};

// Rows pruned per second: `state.range(0)` lifecycles journaled (untimed),
// then pruned in steps as `run` takes them (timed); range(1) = 1 writes an archive.
void BM_PruneThroughput(benchmark::State& state) {
  LogToFile();
  const int lifecycles = static_cast<int>(state.range(0));
  const bool archive = state.range(1) != 0;
  int64_t rows = 0, steps = 0;
  double seconds = 0;
  for (auto _ : state) {
    Filled f(lifecycles);
    if (!f.ok) state.SkipWithError("a lifecycle failed");
    journal::Journal* j = f.journal.get();
    journal::PruneOptions o;
    o.cutoff_ms = NowMs(f.clock);
    o.max_rows = reconciler::Retention::kMaxRows;  // as `run` prunes
    if (archive) o.archive_dir = f.archive;
    const auto start = Clock::now();
    for (;;) {
      auto r = j->Prune(o);
      if (!r.ok()) state.SkipWithError(r.status().ToString().c_str());
      if (!r.ok() || r->rows == 0) break;
      rows += r->rows;
      ++steps;
    }
    const double took = SecondsSince(start);
    seconds += took;
    state.SetIterationTime(took);
  }
  state.counters["rows_per_s"] = static_cast<double>(rows) / seconds;
  state.counters["ms_per_step"] = 1000 * seconds / static_cast<double>(std::max<int64_t>(steps, 1));
}
BENCHMARK(BM_PruneThroughput)
    ->ArgNames({"lifecycles", "archive"})
    ->Args({5000, 0})
    ->Args({5000, 1})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

// Milliseconds each of `n` intents took to be durable.
std::vector<double> IntentLatencies(journal::Journal& j, int n, int64_t from) {
  std::vector<double> ms;
  for (int i = 0; i < n; ++i) {
    Snapshot s = fk::testing::HealthySnapshot("stale-" + std::to_string(from + i));
    s.sandbox.uid = "5a1e0000-0000-4000-8000-" + std::to_string(100000000000 + from + i);
    s.workload_fence.generation = 2;
    const auto start = Clock::now();
    if (!j.Record(Evaluation{s, decide(s), "1"}).ok()) std::abort();
    ms.push_back(1000 * SecondsSince(start));
  }
  return ms;
}

// An intent's latency with pruning (and archiving) running back to back on
// another thread, against the same journal without it.
void BM_IntentLatencyWhilePruning(benchmark::State& state) {
  LogToFile();
  for (auto _ : state) {
    Filled f(20000);
    if (!f.ok) state.SkipWithError("a lifecycle failed");
    journal::Journal* j = f.journal.get();
    const ManualTimeSource& clock = f.clock;
    const std::string& archive_dir = f.archive;
    const std::vector<double> quiet = IntentLatencies(*j, 300, 0);
    std::atomic<bool> stop{false};
    std::atomic<int64_t> pruned{0};
    std::thread pruner([&] {
      journal::PruneOptions o;
      o.cutoff_ms = NowMs(clock) - 1'800'000;
      o.max_rows = reconciler::Retention::kMaxRows;  // as `run` prunes
      o.archive_dir = archive_dir;
      while (!stop) {
        auto r = j->Prune(o);
        if (!r.ok() || r->rows == 0) break;
        pruned += r->rows;
      }
    });
    const std::vector<double> busy = IntentLatencies(*j, 300, 1000);
    stop = true;
    pruner.join();
    state.counters["p50_ms_quiet"] = Percentile(quiet, 0.5);
    state.counters["p99_ms_quiet"] = Percentile(quiet, 0.99);
    state.counters["p50_ms_pruning"] = Percentile(busy, 0.5);
    state.counters["p99_ms_pruning"] = Percentile(busy, 0.99);
    state.counters["rows_pruned_meanwhile"] = static_cast<double>(pruned.load());
  }
}
BENCHMARK(BM_IntentLatencyWhilePruning)->Iterations(1)->Unit(benchmark::kMillisecond);

// A year at 1,000 lifecycles a day, 30-day retention ticked as `run` ticks
// it (here once per lifecycle, every 86.4 simulated seconds). The journal is
// on tmpfs where there is one (the year is about bytes, not fsync). The
// bound: 30 days x 1,000 x the bytes of a lifecycle, plus a tenth for pages
// freed but not yet reused and the projections.
void BM_SimulatedYear(benchmark::State& state) {
  LogToFile();
  const int per_day = 1000, days = static_cast<int>(state.range(0));
  const auto retention = std::chrono::hours(24 * 30);
  for (auto _ : state) {
    const fk::testing::TempDir dir(fs::exists("/dev/shm") ? fs::path("/dev/shm") : BenchDir());
    ManualTimeSource clock;
    const std::string path = dir.File("journal.db");
    auto j = Open(path, clock);
    reconciler::Retention pruning(*j, {retention, ""}, clock);
    std::vector<int64_t> month_end_bytes;
    int64_t lifecycles = 0, at_day_30 = 0;
    for (int day = 1; day <= days; ++day) {
      for (int i = 0; i < per_day; ++i) {
        if (!Lifecycle(*j, lifecycles++)) state.SkipWithError("a lifecycle failed");
        clock.Advance(std::chrono::milliseconds(86'400'000 / per_day));
        pruning.Tick();
      }
      (void)j->Checkpoint();
      if (day == 30) at_day_30 = FileBytes(path);
      if (day % 30 == 0 || day == days) {
        month_end_bytes.push_back(FileBytes(path));
        std::fprintf(stderr, "simulated day %3d: journal %8.2f MB, %lld rows pruned so far\n", day,
                     static_cast<double>(month_end_bytes.back()) / 1e6,
                     static_cast<long long>(pruning.rows_pruned()));
      }
    }
    const double bound = 30.0 * per_day * 1210 * 1.1;
    state.counters["bytes_day_30"] = static_cast<double>(at_day_30);
    state.counters["bytes_end"] = static_cast<double>(month_end_bytes.back());
    state.counters["bytes_max"] =
        static_cast<double>(*std::max_element(month_end_bytes.begin(), month_end_bytes.end()));
    state.counters["bound_bytes"] = bound;
    state.counters["rows_pruned"] = static_cast<double>(pruning.rows_pruned());
    state.counters["prune_failures"] = static_cast<double>(pruning.failures());
  }
}
BENCHMARK(BM_SimulatedYear)->Arg(365)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace fk::bench
