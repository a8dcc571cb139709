// The fixture of the SandboxReconciler tests: the in-process API simulator
// behind a FakeTransport that can lose answers, a cache the test fills, a
// real journal (SQLite or in memory) and a manual clock.
#pragma once

#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <filesystem>
#include <set>
#include "domain/fold.h"
#include "fake_transport.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "kube/json_fields.h"
#include "kube/objects.h"
#include "map_cache.h"
#include "memory_journal.h"
#include "reconciler/sandbox_reconciler.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "test_support.h"

namespace fk::reconciler {

namespace json = boost::json;
using namespace std::chrono_literals;
using Next = ReconcileResult::Next;
using fk::testing::MapCache;

constexpr const char* kSandboxes = fk::testing::kNsSandboxesPath;
constexpr const char* kPods = "/api/v1/namespaces/ns/pods";

// One running sandbox "a" admitted under fence generation 1 while the fence
// is at generation 2: stale, to be suspended.
constexpr const char* kStaleScenario = R"(
namespaces:
  - name: ns
    fence: {generation: 2}
    sandboxes:
      - {name: a, mode: Running, admittedFenceGeneration: 1}
)";

struct RecordingEvents : EventSink {
  void Publish(FailClosedEvent e) override { published.push_back(std::move(e)); }
  std::vector<FailClosedEvent> published;
};

// Every test runs twice: over the SQLite journal and over the in-memory one
// (tests/memory_journal.h), which plans and folds the same way without a file.
enum class JournalKind { kSqlite, kMemory };

class SandboxReconcilerTest : public ::testing::TestWithParam<JournalKind> {
 protected:
  using Reply = std::optional<Result<kube::HttpResponse>>;

  void SetUp() override {
    sim::SimOptions so;
    so.emulate_agent_sandbox = false;
    sim_ = std::make_unique<sim::Simulator>(so, time_);
    auto sc = sim::ParseScenario(Scenario(), "test");
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    ASSERT_TRUE(sim::ApplyScenario(*sim_, *sc).ok());
    OpenJournal();
    Restart();
  }

  virtual const char* Scenario() const { return kStaleScenario; }

  // Opens the journal again, as a new process would (the in-memory one is
  // kept: it stands for a journal that outlives the process).
  void OpenJournal() {
    if (GetParam() == JournalKind::kMemory) {
      if (!memory_) {
        memory_ = std::make_unique<fk::testing::MemoryJournal>(time_);
        memory_->RefuseWrites([this] { return refuse_writes_; });
      }
      journal_ = memory_.get();
      return;
    }
    journal_ = nullptr;
    sqlite_.reset();
    journal::OpenOptions jo;
    jo.clock = &time_;
    jo.refuse_writes = [this] { return refuse_writes_; };
    auto j = journal::Journal::Open(dir_.File("journal.db"), jo);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    sqlite_ = std::move(*j);
    journal_ = sqlite_.get();
  }
  // Commits that appended something, on either journal.
  uint64_t Commits() const { return sqlite_ ? sqlite_->stats().commits : memory_->commits(); }
  // The journal is gone (a lost volume): the next OpenJournal starts afresh.
  void LoseJournal() {
    journal_ = nullptr;
    memory_.reset();
    for (const char* suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(dir_.File(std::string("journal.db") + suffix));
  }
  // For a test that is the journal's only user.
  const domain::JournalState& State() const {
    return sqlite_ ? sqlite_->state() : memory_->state();
  }
  std::vector<domain::Event> Events() const {
    if (memory_) return memory_->events();
    std::vector<domain::Event> out;
    (void)sqlite_->ForEachEvent(1, sqlite_->state().last_seq, [&](const domain::Event& e) {
      out.push_back(e);
      return Status::Ok();
    });
    return out;
  }

  // A new process on the same journal and cluster.
  void Restart() {
    reconciler_.reset();
    auto transport = fk::testing::InProcessTransport(
        *sim_, [this](const kube::HttpRequest& r, const fk::testing::Forward& forward) {
          return Handle(r, forward);
        });
    transport_ = transport.get();
    kube::ClientOptions co;
    co.time = &time_;
    co.qps = 0;
    client_ = kube::ApiClient::CreateWithTransport({}, co, std::move(transport));
    ReconcilerOptions o;
    o.writer_id = "writer-" + std::to_string(++incarnation_);  // a new process, a new writer id
    o.write_fence = [this]() -> std::optional<MonoTime> {
      if (!may_write_) return std::nullopt;
      return MonoTime::max();
    };
    o.return_freed_memory = [this] { ++memory_returned_; };
    o.enforcement = enforcement_;
    reconciler_ = std::make_unique<SandboxReconciler>(cache_, *client_, *journal_, time_, &events_,
                                                      nullptr, o);
    SyncCache();
  }

  Result<kube::HttpResponse> Handle(const kube::HttpRequest& r,
                                    const fk::testing::Forward& forward) {
    if (before_) {
      if (Reply x = before_(r)) return *x;
    }
    const kube::HttpResponse reply = *forward();  // the simulator always answers
    if (after_) {
      if (Reply x = after_(r, reply)) return *x;
    }
    return reply;
  }

  json::value Server(const std::string& collection, const std::string& name) {
    sim::ApiReply a =
        sim::HandleRequest(*sim_, {"GET", collection + std::string("/") + name, "", ""}, "sim");
    return a.status == 200 ? json::parse(a.body) : json::value();
  }
  void ServerPatch(const std::string& target, const json::value& patch) {
    sim::HandleRequest(
        *sim_, {"PATCH", target, json::serialize(patch), "application/merge-patch+json"}, "sim");
  }

  // The cache catches up with the server.
  void SyncCache() {
    for (auto kind : {MapCache::Kind::kSandboxes, MapCache::Kind::kPods, MapCache::Kind::kPolicies})
      cache_.Clear(kind);
    cache_.FillFrom("ns",
                    [this](const std::string& path) { return fk::testing::SimGet(*sim_, path); });
  }

  int Sent(const std::string& method, const std::string& target_part = "/sandboxes/") const {
    int n = 0;
    for (const auto& r : transport_->requests())
      n += r.method == method && r.target.find(target_part) != std::string::npos;
    return n;
  }
  // The transitions view, as "outcome" per intent in seq order.
  std::vector<std::string> Outcomes() {
    std::vector<std::string> out;
    std::map<int64_t, std::string> by_seq;
    for (const domain::Event& e : Events()) {
      if (std::holds_alternative<domain::SuspendIntent>(e.body)) by_seq[e.seq] = "pending";
      if (const auto* o = std::get_if<domain::SuspendOutcome>(&e.body))
        by_seq[e.ref_seq] = domain::ToString(o->outcome);
    }
    for (const auto& [seq, outcome] : by_seq) out.push_back(outcome);
    return out;
  }
  std::string Mode(const std::string& name) {
    return kube::StringField(kube::ObjectField(Server(kSandboxes, name), "spec"), "operatingMode")
        .value_or("");
  }
  bool IsSandboxPatch(const kube::HttpRequest& r) const {
    return r.method == "PATCH" && r.target.find("/sandboxes/") != std::string::npos;
  }

  ManualTimeSource time_;
  fk::testing::TempDir dir_;
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<journal::Journal> sqlite_;
  std::unique_ptr<fk::testing::MemoryJournal> memory_;
  journal::JournalWriter* journal_ = nullptr;
  kube::FakeTransport* transport_ = nullptr;
  std::unique_ptr<kube::ApiClient> client_;
  fk::testing::MapCache cache_;
  RecordingEvents events_;
  std::unique_ptr<SandboxReconciler> reconciler_;
  std::function<Reply(const kube::HttpRequest&)> before_;
  std::function<Reply(const kube::HttpRequest&, const kube::HttpResponse&)> after_;
  bool may_write_ = true;
  domain::Enforcement enforcement_;  // of the next Restart()
  bool refuse_writes_ = false;
  int incarnation_ = 0;
  int memory_returned_ = 0;
};

inline std::string KindName(const ::testing::TestParamInfo<JournalKind>& info) {
  return info.param == JournalKind::kSqlite ? "Sqlite" : "Memory";
}

}  // namespace fk::reconciler
