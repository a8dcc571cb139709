// Rollout throughput (issue 10): N stale sandboxes — running, admitted under
// fence generation 1 while the fence is at 2 — suspended by the real
// controller (informers, work queue, SQLite journal on disk, Events on) over
// real HTTP to the simulated API server, against that server's own ceiling
// for the same API work: a client that only sends each sandbox's suspend
// PATCH and its Event, with the same concurrency, to a freshly populated
// server. Goal: suspends_per_s >= 0.9 x ceiling_per_s.
//
// After convergence the same run checks the idle goal: two resync passes (an
// idle minute at the default 30 s resync) must send no API request beyond
// the open watches and append no journal row.
#include <benchmark/benchmark.h>

#include <atomic>
#include <boost/json.hpp>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "journal/journal.h"
#include "kube/sandbox_api.h"
#include "reconciler/event_recorder.h"
#include "reconciler/metrics.h"
#include "reconciler/sandbox_controller.h"
#include "reconciler/sandbox_reconciler.h"

namespace fk::bench {
namespace {
using namespace std::chrono_literals;

// Enough retained watch events that no watch of the run expires (a 410
// would make an informer list everything again).
size_t History(int n) { return 10 * static_cast<size_t>(n) + 10000; }
std::chrono::milliseconds Deadline(int n) { return 60s + n * 30ms; }

const sim::ResourceKind& SandboxKind() { return *sim::FindKind("agents.x-k8s.io", "sandboxes"); }

// What a transition's PATCH and Event need to know about a sandbox.
struct Target {
  std::string ns, name, uid, resource_version;
};

std::string Meta(const boost::json::value& obj, const char* field) {
  return std::string(obj.at("metadata").at(field).as_string());
}

std::vector<Target> Targets(sim::Simulator& sim) {
  std::vector<Target> out;
  for (const auto& obj : sim.store().List(SandboxKind(), "", {}, {}).items)
    out.push_back({Meta(obj, "namespace"), Meta(obj, "name"), Meta(obj, "uid"),
                   Meta(obj, "resourceVersion")});
  return out;
}

// One fail-closed transition's API work as the reconciler sends it: the
// conditional merge PATCH and the events.k8s.io/v1 Event. Nothing else.
bool Transition(kube::ApiClient& client, const Target& t, int64_t seq) {
  const auto patch_path =
      kube::ObjectPath(kube::SandboxResource(domain::ApiVersion::kV1beta1), t.ns, t.name);
  const auto event_path = kube::ObjectPath(kube::EventResource(), t.ns, "");
  if (!patch_path.ok() || !event_path.ok()) return false;
  const auto patched = client.MergePatch(
      *patch_path,
      kube::SuspendPatchBody(
          {domain::ApiVersion::kV1beta1, t.resource_version, "fence-stale", {seq, "bench"}}));
  const reconciler::FailClosedEvent e{
      t.ns,
      t.name,
      t.uid,
      domain::ApiVersion::kV1beta1,
      "fence-stale",
      "workload fence openshell-sandbox-workloads generation 1 -> 2",
      seq};
  const auto posted =
      client.Send("POST", *event_path,
                  reconciler::EventJson(e, "fencekeeper-bench", std::chrono::system_clock::now(),
                                        static_cast<uint64_t>(seq)),
                  "application/json");
  return patched.ok() && posted.ok();
}

struct Ceiling {
  double per_s = 0;
  double requests_per_transition = 0;
  std::string error;
};

// The server double's ceiling: `threads` threads over one HttpTransport
// client (as the controller's workers share one), nothing but the API work.
Ceiling MeasureCeiling(int n, int namespaces, int threads) {
  SimCluster cluster(Fleet(n, namespaces, /*stale=*/true), History(n));
  if (!cluster.status().ok()) return {0, 0, cluster.status().ToString()};
  const std::vector<Target> targets = Targets(cluster.sim());
  auto client = HttpClient(cluster.url(), threads);
  std::atomic<size_t> next{0};
  std::atomic<int> failures{0};
  const int requests_before = cluster.NonWatchRequests();
  const auto start = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i; (i = next.fetch_add(1)) < targets.size();)
        if (!Transition(*client, targets[i], static_cast<int64_t>(i) + 1)) failures.fetch_add(1);
    });
  }
  for (auto& t : pool) t.join();
  const double seconds = SecondsSince(start);
  if (failures > 0 || cluster.suspended() != n) {
    return {0, 0,
            "ceiling client: " + std::to_string(failures.load()) + " transitions failed, " +
                std::to_string(cluster.suspended()) + " of " + std::to_string(n) + " suspended"};
  }
  return {n / seconds, double(cluster.NonWatchRequests() - requests_before) / n, ""};
}

// The real controller against its own freshly populated server.
class RolloutRun {
 public:
  RolloutRun(int n, int namespaces, int workers)
      : n_(n),
        workers_(workers),
        cluster_(Fleet(n, namespaces, /*stale=*/true), History(n)),
        dir_(BenchDir()) {}
  ~RolloutRun() {
    if (controller_) controller_->Stop();
  }

  // Opens the journal, starts the controller, waits for its caches.
  std::string Start() {
    if (!cluster_.status().ok()) return cluster_.status().ToString();
    auto j = journal::Journal::Open(dir_.File("journal.db"));
    if (!j.ok()) return j.status().ToString();
    journal_ = std::move(*j);
    client_ = HttpClient(cluster_.url(), 2 * workers_);  // workers and Event senders
    reconciler::SandboxControllerOptions o;
    o.workers = workers_;
    controller_ = reconciler::SandboxController::WithInformers(*client_, *journal_, o, &metrics_);
    controller_->Start();
    if (WaitUntil([&] { return controller_->Synced(); }, Deadline(n_))) return "";
    std::string unsynced;
    for (const auto& check : controller_->CacheChecks())
      if (!check.ok) unsynced += " " + check.name;
    return "caches not synced within " + std::to_string(Deadline(n_).count()) + " ms:" + unsynced;
  }

  // From caches synced until every sandbox is suspended on the server.
  std::string Converge() {
    const auto start = Clock::now();
    suspended_at_sync_ = cluster_.suspended();
    requests_at_sync_ = cluster_.NonWatchRequests();
    rows_at_sync_ = Rows();
    if (!WaitUntil([&] { return cluster_.suspended() >= n_; }, Deadline(n_))) {
      return "not converged: " + std::to_string(cluster_.suspended()) + " of " +
             std::to_string(n_) + " suspended within " + std::to_string(Deadline(n_).count()) +
             " ms";
    }
    seconds_ = SecondsSince(start);
    return "";
  }

  // Waits for the rollout's aftermath: every Event sent or given up, the
  // caches caught up with the server, and a full pass that appends nothing.
  std::string Settle() {
    const auto& c = *controller_;
    if (!WaitUntil(
            [&] {
              const auto s = c.stats();
              return s.events_created + s.events_failed >= s.applied;
            },
            Deadline(n_)))
      return "Events not drained";
    for (int attempt = 0; attempt < 20; ++attempt) {
      if (!CaughtUp()) return "informers behind the server";
      const int64_t rows = Rows();
      if (!Pass()) return "resync pass not done";
      if (Rows() == rows) return "";
    }
    return "journal still growing after 20 passes";
  }

  // An idle minute: two resync passes over every cached sandbox.
  std::string Idle() {
    const int requests = cluster_.NonWatchRequests();
    const int watches = cluster_.sim().RequestCount("watch");
    const int64_t rows = Rows();
    if (!Pass() || !Pass()) return "idle resync pass not done";
    idle_requests_ = cluster_.NonWatchRequests() - requests;
    idle_watches_ = cluster_.sim().RequestCount("watch") - watches;
    idle_rows_ = Rows() - rows;
    return "";
  }

  void Report(benchmark::State& state) const {
    const auto s = controller_->stats();
    state.counters["suspends_per_s"] = n_ / seconds_;
    state.counters["suspended_at_sync"] = suspended_at_sync_;
    state.counters["requests_per_transition"] =
        double(cluster_.NonWatchRequests() - requests_at_sync_) / n_;
    state.counters["rows_per_transition"] = double(Rows() - rows_at_sync_) / n_;
    // What bounds a worker: its durable commits (each one fsync, on its path).
    const double commits = Metric("fencekeeper_journal_append_duration_seconds_count");
    state.counters["commits_per_transition"] = commits / n_;
    state.counters["commit_ms"] =
        commits > 0 ? 1e3 * Metric("fencekeeper_journal_append_duration_seconds_sum") / commits : 0;
    state.counters["events_created"] = s.events_created;
    state.counters["events_failed"] = s.events_failed;
    state.counters["conflicts"] = s.conflicts;
    state.counters["idle_requests"] = idle_requests_;
    state.counters["idle_watch_requests"] = idle_watches_;
    state.counters["idle_rows"] = double(idle_rows_);
  }
  double seconds() const { return seconds_; }

 private:
  int64_t Rows() const {
    return journal_->Read([](const domain::JournalState& s) { return s.last_seq; });
  }
  // A sample's value from the controller's Prometheus text (0 if absent).
  double Metric(const std::string& name) const {
    const std::string text = metrics_.Render();
    const size_t at = text.find("\n" + name + " ");
    return at == std::string::npos ? 0 : std::stod(text.substr(at + name.size() + 2));
  }
  // Every informer has seen the server's current resourceVersion (bookmarks carry it).
  bool CaughtUp() {
    const int64_t rv = cluster_.sim().store().CurrentResourceVersion();
    return WaitUntil(
        [&] {
          for (const auto& informer : controller_->informers()) {
            const std::string v = informer->stats().resource_version;
            if (v.empty() || std::stoll(v) < rv) return false;
          }
          return true;
        },
        60s);
  }
  // One resync pass (what the resync loop does every 30 s), waited for.
  bool Pass() {
    const int before = controller_->stats().reconciles;
    controller_->EnqueueAll();
    return WaitUntil([&] { return controller_->stats().reconciles >= before + n_; }, Deadline(n_));
  }

  const int n_, workers_;
  SimCluster cluster_;
  fk::testing::TempDir dir_;
  reconciler::Metrics metrics_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<kube::ApiClient> client_;
  std::unique_ptr<reconciler::SandboxController> controller_;
  double seconds_ = 0;
  int suspended_at_sync_ = 0, requests_at_sync_ = 0, idle_requests_ = 0, idle_watches_ = 0;
  int64_t rows_at_sync_ = 0, idle_rows_ = 0;
};

std::string RunRollout(RolloutRun& run) {
  for (auto step :
       {&RolloutRun::Start, &RolloutRun::Converge, &RolloutRun::Settle, &RolloutRun::Idle}) {
    if (std::string error = (run.*step)(); !error.empty()) return error;
  }
  return "";
}

void BM_Rollout(benchmark::State& state) {
  LogToFile();
  const int n = static_cast<int>(state.range(0));
  const int workers = static_cast<int>(state.range(1));
  const int namespaces = static_cast<int>(state.range(2));
  for (auto _ : state) {
    const Ceiling ceiling = MeasureCeiling(n, namespaces, workers);
    if (!ceiling.error.empty()) {
      state.SkipWithError(ceiling.error.c_str());
      break;
    }
    RolloutRun run(n, namespaces, workers);
    if (std::string error = RunRollout(run); !error.empty()) {
      state.SkipWithError(error.c_str());
      break;
    }
    state.SetIterationTime(run.seconds());
    run.Report(state);
    state.counters["ceiling_per_s"] = ceiling.per_s;
    state.counters["ceiling_requests_per_transition"] = ceiling.requests_per_transition;
    state.counters["ratio"] = n / run.seconds() / ceiling.per_s;
    state.counters["goal_ratio"] = 0.9;
  }
}
// One namespace, one fence: the operator of the issue rolls one fence over
// all their sandboxes. The 100-namespace case separates the cost of pod
// events that scales with the sandboxes of a namespace.
BENCHMARK(BM_Rollout)
    ->ArgNames({"sandboxes", "workers", "namespaces"})
    ->ArgsProduct({{2000, 10000}, {16, 1, 64}, {1}})
    ->Args({10000, 16, 100})
    ->Args({10000, 1, 100})
    ->Iterations(1)
    ->UseManualTime()
    ->Unit(benchmark::kSecond);

}  // namespace
}  // namespace fk::bench
