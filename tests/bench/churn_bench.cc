// Journal bytes per sandbox lifecycle (issue 18, docs/design.md#the-compact-journal):
// waves of sandboxes, each wave in a namespace of its own, are
// created healthy, suspended by a fence roll and deleted (pods too), through
// the real controller (informers, work queue, SQLite journal on disk) over
// real HTTP to the simulated API server. After every wave is forgotten the
// WAL is checkpointed and two things are counted: the journal's used pages
// — events, indexes and projections, (page_count - freelist_count) *
// page_size — and what the volume holds, the journal file and its WAL.
// Goals: bytes_per_lifecycle <= 1536 (1.5 KiB), 1024 the aim;
// file_bytes_per_lifecycle <= 1024.
#include <benchmark/benchmark.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstdlib>
#include <filesystem>

#include "bench_support.h"
#include "journal/journal.h"
#include "reconciler/metrics.h"
#include "reconciler/sandbox_controller.h"
#include "sim/scenario.h"

namespace fk::bench {
namespace {
using namespace std::chrono_literals;

// What the journal file holds, read through a connection of its own.
struct FileUse {
  int64_t used_bytes = 0;  // pages in use (not on the freelist) x page size
  int64_t file_bytes = 0;  // the journal file and its WAL
  int64_t rows = 0;        // rows of the event tables (one stored row may hold several events)
};

FileUse Measure(const std::string& path) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  FileUse u;
  std::error_code ec;
  for (const std::string& file : {path, path + "-wal"}) {
    const auto size = std::filesystem::file_size(file, ec);
    if (!ec) u.file_bytes += static_cast<int64_t>(size);
  }
  u.used_bytes = (db.execAndGet("PRAGMA page_count").getInt64() -
                  db.execAndGet("PRAGMA freelist_count").getInt64()) *
                 db.execAndGet("PRAGMA page_size").getInt64();
  SQLite::Statement tables(db,
                           "SELECT name FROM sqlite_schema WHERE type = 'table' AND name IN "
                           "('events', 'events_v1', 'journal')");
  while (tables.executeStep())
    u.rows += db.execAndGet("SELECT count(*) FROM " + tables.getColumn(0).getString()).getInt64();
  return u;
}

// One wave: `n` healthy sandboxes in namespace `ns`.
sim::Scenario Wave(const std::string& ns, int n) {
  sim::Scenario sc;
  sim::ScenarioNamespace space;
  space.name = ns;
  for (int i = 0; i < n; ++i) {
    sim::ScenarioSandbox sb;
    sb.name = "sandbox-" + std::to_string(i);
    space.sandboxes.push_back(std::move(sb));
  }
  sc.namespaces.push_back(std::move(space));
  return sc;
}

class ChurnRun {
 public:
  ChurnRun(int per_wave) : per_wave_(per_wave), cluster_(sim::Scenario{}, 100000) {}
  ~ChurnRun() {
    if (controller_) controller_->Stop();
  }

  std::string Start() {
    if (!cluster_.status().ok()) return cluster_.status().ToString();
    auto j = journal::Journal::Open(path_);
    if (!j.ok()) return j.status().ToString();
    journal_ = std::move(*j);
    client_ = HttpClient(cluster_.url(), 8);
    reconciler::SandboxControllerOptions o;
    o.workers = 4;
    controller_ = reconciler::SandboxController::WithInformers(*client_, *journal_, o, &metrics_);
    controller_->Start();
    if (!WaitUntil([&] { return controller_->Synced(); }, 60s)) return "caches not synced";
    if (!journal_->Checkpoint().ok()) return "checkpoint failed";
    start_ = Measure(path_);
    commits_at_start_ = journal_->stats().commits;
    return "";
  }

  // Created healthy, suspended by a fence roll, deleted with its pods.
  std::string RunWave(int wave) {
    const std::string ns = "wave-" + std::to_string(wave);
    if (Status s = sim::ApplyScenario(cluster_.sim(), Wave(ns, per_wave_)); !s.ok())
      return s.ToString();
    if (!WaitForVerdicts(ns, domain::Verdict::kHealthy)) return ns + ": not all healthy";
    const int suspended = cluster_.suspended();
    if (sim::RollFence(cluster_.sim(), ns) == 0) return ns + ": no fence to roll";
    if (!WaitUntil([&] { return cluster_.suspended() >= suspended + per_wave_; }, 120s))
      return ns + ": not all suspended";
    if (!WaitForVerdicts(ns, domain::Verdict::kHold)) return ns + ": not all held";
    Delete(ns);
    if (!WaitUntil([&] { return Sandboxes(ns) == 0; }, 120s)) return ns + ": not all forgotten";
    lifecycles_ += per_wave_;
    return "";
  }

  void Report(benchmark::State& state) {
    (void)journal_->Checkpoint();
    const FileUse end = Measure(path_);
    const double n = lifecycles_;
    state.counters["lifecycles"] = n;
    state.counters["bytes_per_lifecycle"] = double(end.used_bytes - start_.used_bytes) / n;
    state.counters["goal_bytes"] = 1024;
    state.counters["bound_bytes"] = 1536;
    state.counters["file_bytes_per_lifecycle"] = double(end.file_bytes - start_.file_bytes) / n;
    state.counters["file_limit_bytes"] = 1024;
    state.counters["rows_per_lifecycle"] = double(end.rows - start_.rows) / n;
    state.counters["events_per_lifecycle"] =
        double(journal_->Read([](const domain::JournalState& s) { return s.last_seq; })) / n;
    state.counters["commits_per_lifecycle"] =
        double(journal_->stats().commits - commits_at_start_) / n;
    state.counters["file_bytes"] = double(end.file_bytes);
    // FK_BENCH_KEEP_JOURNAL=PATH keeps a copy of the journal to look into
    // (e.g. with the dbstat virtual table of the sqlite3 shell).
    if (const char* keep = std::getenv("FK_BENCH_KEEP_JOURNAL"); keep && *keep) {
      std::error_code ec;
      std::filesystem::copy_file(path_, keep, std::filesystem::copy_options::overwrite_existing,
                                 ec);
    }
  }

 private:
  size_t Sandboxes(const std::string& ns, std::optional<domain::Verdict> verdict = {}) const {
    return journal_->Read([&](const domain::JournalState& s) {
      size_t count = 0;
      for (const auto& [uid, r] : s.sandboxes)
        if (r.ns == ns && (!verdict || (r.decision && r.decision->verdict == *verdict))) ++count;
      return count;
    });
  }
  bool WaitForVerdicts(const std::string& ns, domain::Verdict v) {
    return WaitUntil([&] { return Sandboxes(ns, v) == static_cast<size_t>(per_wave_); }, 120s);
  }
  void Delete(const std::string& ns) {
    auto& store = cluster_.sim().store();
    const auto* sandboxes = sim::FindKind("agents.x-k8s.io", "sandboxes");
    const auto* pods = sim::FindKind("", "pods");
    for (int i = 0; i < per_wave_; ++i) {
      const std::string name = "sandbox-" + std::to_string(i);
      store.Delete(*sandboxes, ns, name, std::nullopt, std::nullopt);
      store.Delete(*pods, ns, name, std::nullopt, std::nullopt);
      store.Delete(*pods, ns, "os-supervisor-" + name, std::nullopt, std::nullopt);
    }
  }

  const int per_wave_;
  SimCluster cluster_;
  fk::testing::TempDir dir_{BenchDir()};
  std::string path_ = dir_.File("journal.db");
  reconciler::Metrics metrics_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<kube::ApiClient> client_;
  std::unique_ptr<reconciler::SandboxController> controller_;
  FileUse start_;
  uint64_t commits_at_start_ = 0;
  int lifecycles_ = 0;
};

void BM_JournalBytesPerLifecycle(benchmark::State& state) {
  LogToFile();
  const int waves = static_cast<int>(state.range(0));
  const int per_wave = static_cast<int>(state.range(1));
  for (auto _ : state) {
    ChurnRun run(per_wave);
    std::string error = run.Start();
    for (int w = 0; error.empty() && w < waves; ++w) error = run.RunWave(w);
    if (!error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
    run.Report(state);
  }
}
BENCHMARK(BM_JournalBytesPerLifecycle)
    ->ArgNames({"waves", "per_wave"})
    ->Args({5, 300})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

}  // namespace
}  // namespace fk::bench
