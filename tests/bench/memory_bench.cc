// Memory per sandbox (issue 10): steady-state RSS growth <= 1 KiB per sandbox
// at 10,000 sandboxes with realistic ~9.5 KB pods (a workload and a supervisor
// pod each), and a start-up peak bounded by the list page, not the cluster.
//
// Real processes: `fencekeeper sim` serves a generated fleet, `fencekeeper
// run` watches it; once every sandbox is evaluated (the verdict gauge on
// /metrics), VmRSS and VmHWM are read from /proc/<pid>/status. The same is
// done with an empty namespace in the same run: growth per sandbox =
// (RSS(N) - RSS(0)) / N, compared with the 1024-byte goal.
// FK_RUN_BINARY runs another build's `run` (e.g. the code before a change)
// against this build's simulator.
//
// The API is served over TLS, as every cluster's is: the client's OpenSSL
// is then set up at start, with an empty namespace too. Over plain HTTP
// (the benchmark's second argument 0) the first journal row's hash is what
// sets up libcrypto, and its 2.1 MB of code pages land on the sandboxes:
// a fixed cost that no cluster pays per sandbox.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "domain/decision.h"
#include "domain/fold.h"
#include "domain/journal_state.h"
#include "domain/plan.h"
#include "kube/client.h"
#include "map_cache.h"
#include "test_support.h"
#include "tls_util.h"

#include <malloc.h>

extern char** environ;

namespace {
using namespace std::chrono_literals;
namespace kube = fk::kube;
namespace domain = fk::domain;
namespace reconciler = fk::reconciler;

constexpr double kGoalBytesPerSandbox = 1024;
constexpr size_t kPodBytes = 9500;
constexpr int kPageSize = 500;  // the informers' list page (kube::InformerOptions)
constexpr int kFew = 100;       // the slope's first point

// A child process; stdout and stderr go to `log`. Killed when dropped.
class Child {
 public:
  Child(const std::string& binary, std::vector<std::string> args, const std::string& log) {
    args.insert(args.begin(), binary);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawn(&pid_, binary.c_str(), &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~Child() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

// VmRSS and VmHWM of a process, in bytes.
std::map<std::string, double> MemoryOf(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::map<std::string, double> out;
  for (std::string line; std::getline(in, line);) {
    for (const char* key : {"VmRSS", "VmHWM", "RssAnon"}) {
      if (line.rfind(std::string(key) + ":", 0) == 0)
        out[key] = std::stod(line.substr(line.find(':') + 1)) * 1024;  // kB
    }
  }
  return out;
}

// `run`'s health port, from its log record `msg="serving ... /metrics"
// address=127.0.0.1:PORT`.
std::optional<std::string> HealthPort(const std::string& log) {
  const std::string text = fk::testing::ReadBytes(log);
  const std::string address = "address=127.0.0.1:";
  const auto serving = text.find("/metrics\" " + address);
  if (serving == std::string::npos) return std::nullopt;
  const size_t at = text.find(address, serving) + address.size();
  size_t end = at;
  while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
  return text.substr(at, end - at);
}

struct Sample {
  double rss = 0, hwm = 0, seconds = 0;
  double anon = 0;  // RssAnon: the heap and stacks, not the binary's pages
};

// The simulator's arguments to serve HTTPS with a fresh CA's certificate,
// followed by the CA's own, which the kubeconfig it writes then trusts.
std::vector<std::string> TlsArguments(const fk::testing::TempDir& dir) {
  const auto pki = fk::testing::MakeTestPki();
  fk::testing::WriteBytes(dir.File("server.pem"), pki.server_cert + pki.ca_cert);
  fk::testing::WriteBytes(dir.File("server.key"), pki.server_key);
  return {"--tls-cert", dir.File("server.pem"), "--tls-key", dir.File("server.key")};
}

// The simulator's fleet: `n` sandboxes spread evenly over `namespaces`
// namespaces (ns-0000, ns-0001, ...; one: openshell-agents), each with its
// two fence policies and two pods of kPodBytes a sandbox. Sandbox names are
// unique in the cluster, as OpenShell's are: with sb-00000 in every
// namespace, the workload pods' label sets (which carry the sandbox's id)
// would be interned once for all namespaces. No namespace at all
// for n = 0 with many namespaces: the baseline is an empty cluster.
std::string FleetYaml(int n, int namespaces) {
  if (namespaces == 1)
    return "namespaces:\n  - name: openshell-agents\n    podBytes: " + std::to_string(kPodBytes) +
           "\n    generate: {count: " + std::to_string(n) + "}\n";
  if (n == 0) return "namespaces: []\n";
  std::string yaml = "namespaces:\n";
  for (int i = 0; i < namespaces; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "ns-%04d", i);
    yaml += std::string("  - name: ") + name + "\n    podBytes: " + std::to_string(kPodBytes) +
            "\n    generate: {count: " + std::to_string(n / namespaces) + ", prefix: " + name +
            "-sb-}\n";
  }
  return yaml;
}

// Serves `n` sandboxes in `namespaces` namespaces (over TLS or plain HTTP),
// runs fencekeeper until all are evaluated, samples it. One namespace is
// watched by name (--namespace); many as a cluster-wide install watches them,
// with one informer per kind for all namespaces.
std::optional<Sample> Measure(int n, bool tls, int namespaces, std::string* error) {
  fk::testing::TempDir dir;
  const std::string scenario = dir.File("fleet.yaml"), kubeconfig = dir.File("kubeconfig");
  fk::testing::WriteBytes(scenario, FleetYaml(n, namespaces));
  std::vector<std::string> args = {"sim",         "--scenario",         scenario,  "--listen",
                                   "127.0.0.1:0", "--write-kubeconfig", kubeconfig};
  if (tls) {
    for (std::string& a : TlsArguments(dir)) args.push_back(std::move(a));
  }
  Child sim(FK_BINARY, args, dir.File("sim.log"));
  // The simulator says it serves once the kubeconfig is written whole.
  const auto serving = [&] {
    return fk::testing::ReadBytes(dir.File("sim.log")).find("serving the Kubernetes API") !=
           std::string::npos;
  };
  if (!fk::testing::Eventually(serving, 600s)) {
    *error = "the simulator did not start: " + fk::testing::ReadBytes(dir.File("sim.log"));
    return std::nullopt;
  }
  const char* run_binary = std::getenv("FK_RUN_BINARY");
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::string> run_args = {"run",          "--journal", dir.File("journal.db"),
                                       "--kubeconfig", kubeconfig,  "--http-addr",
                                       "127.0.0.1:0"};
  if (namespaces == 1) {
    run_args.push_back("--namespace");
    run_args.push_back("openshell-agents");
  }
  Child run(run_binary ? run_binary : FK_BINARY, run_args, dir.File("run.log"));
  std::optional<std::string> port;
  if (!fk::testing::Eventually([&] { return (port = HealthPort(dir.File("run.log"))).has_value(); },
                               60s)) {
    *error =
        "fencekeeper run did not serve /metrics: " + fk::testing::ReadBytes(dir.File("run.log"));
    return std::nullopt;
  }
  fk::kube::ClusterConfig health;
  health.server = "http://127.0.0.1:" + *port;
  auto client = fk::kube::ApiClient::Create(health);
  if (!client.ok()) {
    *error = client.status().ToString();
    return std::nullopt;
  }
  const std::string evaluated =
      "fencekeeper_sandboxes{verdict=\"healthy\"} " + std::to_string(n) + "\n";
  const bool done = fk::testing::Eventually(
      [&] {
        if (!(*client)->Get("/readyz").ok()) return false;  // 503 until ready
        if (n == 0) return true;
        const auto metrics = (*client)->Get("/metrics");
        return metrics.ok() && metrics->body.find(evaluated) != std::string::npos;
      },
      900s);
  if (!done) {
    const auto metrics = (*client)->Get("/metrics");
    *error = "not every sandbox was evaluated: " +
             (metrics.ok() ? metrics->body : metrics.status().message());
    return std::nullopt;
  }
  Sample s;
  s.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto mem = MemoryOf(run.pid());
  s.rss = mem["VmRSS"];
  s.hwm = mem["VmHWM"];
  s.anon = mem["RssAnon"];
  return s;
}

// Arguments: the sandboxes; 1 = over TLS (as in a cluster), 0 = plain HTTP;
// the namespaces they are spread over (the slope's first point keeps as many
// sandboxes a namespace: 100 sandboxes in 10 of 1,000 namespaces' kind).
void BM_RssPerSandbox(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  const bool tls = state.range(1) != 0;
  const int namespaces = static_cast<int>(state.range(2));
  const int few_namespaces = std::max(1, namespaces * kFew / n);
  Sample empty, few, full;
  for (auto _ : state) {
    std::string error;
    auto e = Measure(0, tls, namespaces, &error);
    auto w = e ? Measure(kFew, tls, few_namespaces, &error) : std::nullopt;
    auto f = w ? Measure(n, tls, namespaces, &error) : std::nullopt;
    if (!f) {
      state.SkipWithError(error.c_str());
      return;
    }
    empty = *e;
    few = *w;
    full = *f;
  }
  const double growth = (full.rss - empty.rss) / n;
  state.counters["sandboxes"] = n;
  state.counters["namespaces"] = namespaces;
  state.counters["rss_empty_MiB"] = empty.rss / (1 << 20);
  state.counters["rss_MiB"] = full.rss / (1 << 20);
  state.counters["peak_MiB"] = full.hwm / (1 << 20);
  state.counters["rss_per_sandbox_B"] = growth;
  // The same growth without the fixed costs an empty namespace never pays:
  // the code pages of deciding, journaling and patching (file-backed, about
  // 2.4 MB) are touched by the first sandbox as by the ten-thousandth. The
  // slope between kFew and n sandboxes, and the anonymous memory alone.
  state.counters["rss_slope_per_sandbox_B"] = (full.rss - few.rss) / (n - kFew);
  state.counters["anon_per_sandbox_B"] = (full.anon - empty.anon) / n;
  state.counters["peak_per_sandbox_B"] = (full.hwm - empty.hwm) / n;
  state.counters["limit_per_sandbox_B"] = kGoalBytesPerSandbox;
  state.counters["ratio"] = growth / kGoalBytesPerSandbox;
  // The start-up peak above the steady state, against one page of pods'
  // JSON (the bound: a page, not the cluster).
  state.counters["peak_over_rss_MiB"] = (full.hwm - full.rss) / (1 << 20);
  state.counters["page_body_MiB"] = double(kPageSize) * kPodBytes / (1 << 20);
  state.counters["seconds_to_evaluated"] = full.seconds;
}
BENCHMARK(BM_RssPerSandbox)
    ->Args({1000, 1, 1})
    ->Args({1000, 0, 1})
    ->Args({10000, 1, 1})
    ->Args({10000, 0, 1})
    ->Args({10000, 1, 1000})
    ->Args({10000, 0, 1000})
    ->Iterations(1)
    ->Unit(benchmark::kSecond)
    ->UseRealTime();

// ---- where the bytes go: heap per sandbox, in process --------------------------

// Bytes allocated and not freed (malloc's own view: no page rounding, no
// retained free memory).
double HeapInUse() {
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd);
}

// A UID as the API server writes it (36 characters).
std::string Uid(const char* kind, int i) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%08x-%.4s-4000-8000-%012d", i, kind, i);
  return buf;
}

std::string Name(int i) {
  std::string digits = std::to_string(i);
  return "sb-" + std::string(digits.size() < 5 ? 5 - digits.size() : 0, '0') + digits;
}

// The sandbox as OpenShell annotates it (as the simulator's scenarios do).
kube::ObjectPtr SandboxJson(int i) {
  namespace json = boost::json;
  const std::string name = Name(i);
  return std::make_shared<const json::value>(json::object{
      {"metadata",
       {{"name", name},
        {"namespace", "openshell-agents"},
        {"uid", Uid("sand", i)},
        {"resourceVersion", std::to_string(100000 + i)},
        {"generation", 1},
        {"labels", {{"openshell.ai/managed-by", "openshell"}, {kube::kSandboxIdLabel, name}}},
        {"annotations",
         {{kube::kWorkloadUidAnnotation, Uid("work", i)},
          {kube::kSupervisorUidAnnotation, Uid("supe", i)},
          {kube::kFenceUidAnnotation, Uid("fenc", 0)},
          {kube::kFenceGenerationAnnotation, "1"}}}}},
      {"spec", {{"operatingMode", "Running"}}}});
}

kube::ObjectPtr PodJson(const std::string& name, const std::string& uid) {
  return std::make_shared<const boost::json::value>(boost::json::object{
      {"metadata", {{"name", name}, {"namespace", "openshell-agents"}, {"uid", uid}}},
      {"spec", boost::json::object{}}});
}

// What the caches keep for N sandboxes and their two pods each (the informer
// transforms, the pod index and an ordered map per kind, as the informers'
// stores), per sandbox.
void BM_CacheHeapPerSandbox(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  double per_sandbox = 0;
  for (auto _ : state) {
    auto cache = std::make_unique<fk::testing::MapCache>();
    const double before = HeapInUse();
    for (int i = 0; i < n; ++i) {
      const std::string name = Name(i);
      cache->Put(reconciler::CacheKind::kSandboxes, "openshell-agents", name, SandboxJson(i));
      cache->Put(reconciler::CacheKind::kPods, "openshell-agents", name,
                 PodJson(name, Uid("work", i)));
      cache->Put(reconciler::CacheKind::kPods, "openshell-agents", "os-supervisor-" + name,
                 PodJson("os-supervisor-" + name, Uid("supe", i)));
    }
    per_sandbox = (HeapInUse() - before) / n;
  }
  state.counters["sandboxes"] = n;
  state.counters["cache_heap_per_sandbox_B"] = per_sandbox;
  state.counters["limit_per_sandbox_B"] = kGoalBytesPerSandbox;
}
BENCHMARK(BM_CacheHeapPerSandbox)->Arg(10000)->Iterations(1)->Unit(benchmark::kMillisecond);

// What the journal's in-memory state (domain::JournalState, folded from the
// events a healthy evaluation records) keeps per sandbox: part of the same
// RSS budget.
void BM_JournalStateHeapPerSandbox(benchmark::State& state) {
  const int n = static_cast<int>(state.range(0));
  double per_sandbox = 0;
  for (auto _ : state) {
    auto journal_state = std::make_unique<domain::JournalState>();
    const double before = HeapInUse();
    int64_t seq = 0;
    for (int i = 0; i < n; ++i) {
      domain::Snapshot s = fk::testing::HealthySnapshot(Name(i), "openshell-agents");
      s.sandbox.uid = Uid("sand", i);
      s.sandbox.fence_uid = s.workload_fence.uid = Uid("fenc", 0);
      s.supervisor_fence.uid = Uid("supf", 0);
      s.sandbox.workload_uid = s.workload_pod.uid = Uid("work", i);
      s.sandbox.supervisor_uid = s.supervisor_pod.uid = Uid("supe", i);
      const domain::Evaluation eval{s, domain::decide(s), std::to_string(100000 + i)};
      for (domain::Event& e : domain::plan_events(*journal_state, eval)) {
        e.seq = ++seq;
        e.recorded_at = "2026-12-01T21:00:00.000Z";
        domain::fold(*journal_state, e);
      }
      // As the live journal keeps it: the digest, not the snapshot.
      journal_state->sandboxes.at(fk::CompactString(s.sandbox.uid)).observation.reset();
    }
    per_sandbox = (HeapInUse() - before) / n;
  }
  state.counters["sandboxes"] = n;
  state.counters["journal_state_heap_per_sandbox_B"] = per_sandbox;
  state.counters["limit_per_sandbox_B"] = kGoalBytesPerSandbox;
}
BENCHMARK(BM_JournalStateHeapPerSandbox)->Arg(10000)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
