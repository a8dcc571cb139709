// Restart to ready (issue 10): from process start — Journal::Open and the
// Manager (discovery, informers listing a cluster of 1,000 sandboxes) — until
// Manager::Ready(), with a journal of 10k, 100k or 1M events against a fresh
// one, alternated in the same run. Goal: ratio <= 1.1.
//
// The long journals are made once per run in the build directory: the real
// controller journals one pass over the cluster (so the journal's sandboxes
// are the cluster's, as after a long life), then its events are copied in
// large transactions of plain SQL until the table holds the target count
// (every kind the controller writes, in the same rows, with the same indexes).
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <map>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "journal/journal.h"
#include "reconciler/manager.h"
#include "reconciler/sandbox_controller.h"

namespace fk::bench {
namespace {
using namespace std::chrono_literals;

constexpr int kSandboxes = 1000;
constexpr int kWorkers = 16;  // `fencekeeper run`'s default
constexpr int kRounds = 5;    // of each kind of start, alternated; medians reported

// The journal the controller writes over one pass of the cluster.
std::string JournalOnePass(SimCluster& cluster, const std::string& path) {
  auto j = journal::Journal::Open(path);
  if (!j.ok()) return j.status().ToString();
  auto client = HttpClient(cluster.url());
  // One worker: this is set-up, not measured, and it must not depend on
  // concurrent workers sharing the journal.
  auto c = reconciler::SandboxController::WithInformers(*client, **j, {});
  c->Start();
  const bool done = WaitUntil(
      [&] {
        return (*j)->Read([](const domain::JournalState& s) {
          return std::count_if(s.sandboxes.begin(), s.sandboxes.end(),
                               [](const auto& kv) { return kv.second.decision.has_value(); });
        }) == kSandboxes;
      },
      300s);
  c->Stop();
  return done ? "" : "the controller did not decide every sandbox of the cluster";
}

// Copies the rows of `from` into `to` in large transactions until it holds `events` rows
// (each copy after the last seq: a row holds up to three events from its seq on).
std::string Grow(const std::string& from, const std::string& to, int64_t events) {
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
  try {
    SQLite::Database db(to, SQLite::OPEN_READWRITE);
    db.exec("PRAGMA synchronous = OFF");  // generation is not what is measured
    for (int64_t have;
         (have = db.execAndGet("SELECT count(*) FROM journal").getInt64()) < events;) {
      SQLite::Transaction tx(db);
      db.exec(
          "INSERT INTO journal (seq, at, kind, subject, ref, body) "
          "SELECT seq + (SELECT max(seq) + 3 FROM journal), at, kind, subject, ref, body "
          "FROM journal ORDER BY seq LIMIT " +
          std::to_string(std::min(have, events - have)));
      tx.commit();
    }
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");  // as a clean shutdown leaves it
  } catch (const SQLite::Exception& e) {
    return to + ": " + e.what();
  }
  return "";
}

// A cluster of 1,000 healthy sandboxes and the journals about it, once per run.
class Fixture {
 public:
  static Fixture& Get() {
    static Fixture f;
    return f;
  }
  SimCluster& cluster() { return cluster_; }
  const fk::testing::TempDir& dir() const { return dir_; }
  const std::string& error() const { return error_; }

  // The journal of `events` events (made on first use, from the next smaller one).
  std::string Journal(int64_t events, std::string* error) {
    if (auto it = journals_.find(events); it != journals_.end()) return it->second;
    std::string from = base_;
    for (const auto& [n, path] : journals_)
      if (n < events) from = path;
    const std::string path = dir_.File("journal-" + std::to_string(events) + ".db");
    *error = Grow(from, path, events);
    journals_[events] = path;
    return path;
  }

 private:
  Fixture() : cluster_(Fleet(kSandboxes, 1, /*stale=*/false), 100000), dir_(BenchDir()) {
    LogToFile();
    error_ =
        cluster_.status().ok() ? JournalOnePass(cluster_, base_) : cluster_.status().ToString();
  }

  SimCluster cluster_;
  fk::testing::TempDir dir_;
  std::string base_ = dir_.File("journal-base.db");
  std::map<int64_t, std::string> journals_;
  std::string error_;
};

// Drops the file's pages from the page cache (only this file's), for a cold start.
void Evict(const std::string& path) {
  for (const std::string& f : {path, path + "-wal"}) {
    const int fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
  }
}

struct Start {
  double open_ms = 0, ready_ms = 0;
  std::string error;
};

// One process start: Journal::Open, then the Manager until Ready().
Start TimeStart(const std::string& journal_path, const std::string& url) {
  Start out;
  const auto start = Clock::now();
  auto j = journal::Journal::Open(journal_path);
  if (!j.ok()) return {0, 0, j.status().ToString()};
  out.open_ms = SecondsSince(start) * 1e3;
  reconciler::Metrics metrics;
  reconciler::ManagerOptions o;
  o.cluster.server = url;
  o.controller.workers = kWorkers;
  reconciler::Manager manager(**j, metrics, o);
  Interrupt stop;
  std::thread run([&] { manager.Run(stop); });
  if (!WaitUntil([&] { return manager.Ready(); }, 120s)) out.error = "not ready within 120 s";
  out.ready_ms = SecondsSince(start) * 1e3;
  stop.Fire();
  run.join();
  return out;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Samples {
  std::vector<double> open_ms, ready_ms;
  void Add(const Start& s) {
    open_ms.push_back(s.open_ms);
    ready_ms.push_back(s.ready_ms);
  }
};

void BM_RestartToReady(benchmark::State& state) {
  Fixture& f = Fixture::Get();
  const int64_t events = state.range(0);
  std::string error = f.error();
  const auto generated = Clock::now();
  const std::string long_journal = error.empty() ? f.Journal(events, &error) : "";
  const double generate_s = SecondsSince(generated);
  for (auto _ : state) {
    Samples fresh, warm, cold;
    for (int round = 0; round < kRounds && error.empty(); ++round) {
      const std::string fresh_path = f.dir().File("fresh-" + std::to_string(round) + ".db");
      const Start starts[] = {TimeStart(fresh_path, f.cluster().url()),
                              TimeStart(long_journal, f.cluster().url()),
                              (Evict(long_journal), TimeStart(long_journal, f.cluster().url()))};
      for (const Start& s : starts)
        if (error.empty()) error = s.error;
      fresh.Add(starts[0]);
      warm.Add(starts[1]);
      cold.Add(starts[2]);
      for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(fresh_path + suffix);
    }
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
    state.SetIterationTime(Median(warm.ready_ms) / 1e3);
    state.counters["events"] = double(events);
    state.counters["ready_ms"] = Median(warm.ready_ms);
    state.counters["fresh_ready_ms"] = Median(fresh.ready_ms);
    state.counters["ratio"] = Median(warm.ready_ms) / Median(fresh.ready_ms);
    state.counters["goal_ratio"] = 1.1;
    state.counters["cold_ready_ms"] = Median(cold.ready_ms);
    state.counters["cold_ratio"] = Median(cold.ready_ms) / Median(fresh.ready_ms);
    state.counters["open_ms"] = Median(warm.open_ms);
    state.counters["fresh_open_ms"] = Median(fresh.open_ms);
    state.counters["cold_open_ms"] = Median(cold.open_ms);
    state.counters["file_mb"] = double(std::filesystem::file_size(long_journal)) / (1 << 20);
    state.counters["generate_s"] = generate_s;
  }
}
BENCHMARK(BM_RestartToReady)
    ->ArgName("events")
    ->Arg(10000)
    ->Arg(100000)
    ->Arg(1000000)
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace fk::bench
