// End to end, in process: the simulator over real HTTP, the real reconciler,
// a journal on disk. Counts PATCH requests, warnings and journal rows.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include <SQLiteCpp/SQLiteCpp.h>

#include <sstream>

#include <boost/json.hpp>
#include <set>
#include <thread>

#include "common/log.h"
#include "controller_instance.h"
#include "journal/journal.h"
#include "journal/space.h"
#include "kube/client.h"
#include "kube/json_fields.h"
#include "kube/objects.h"
#include "reconciler/sandbox_controller.h"
#include "sim/scenario.h"
#include "sim/server.h"
#include "sim/store.h"
#include "sim_fixture.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

using fk::testing::Eventually;

// What a file takes on its volume (blocks, not its length): what deleting or
// truncating it gives back.
int64_t FileBytesOnVolume(const std::string& file) {
  struct stat st {};
  return ::stat(file.c_str(), &st) == 0 ? static_cast<int64_t>(st.st_blocks) * 512 : 0;
}

const sim::ResourceKind& Sandboxes() { return *sim::FindKind("agents.x-k8s.io", "sandboxes"); }
const sim::ResourceKind& Policies() {
  return *sim::FindKind("networking.k8s.io", "networkpolicies");
}

// One reconciler lifetime: its own client, journal connection and controller.
using Instance = testing::ControllerInstance;

class EndToEnd : public testing::SimFixture {
 protected:
  void StartSim(const std::string& scenario_name = "incident-3525", sim::SimOptions extra = {},
                std::vector<sim::FaultRule> faults = {}) {
    StartSimFromFile(scenario_name, [&](sim::Scenario& sc) {
      sc.options.bookmark_interval = 50ms;
      sc.options.drop_watch_after_events = extra.drop_watch_after_events;
      sc.faults = faults;
    });
  }
  std::unique_ptr<Instance> Start(const journal::OpenOptions& options = {}) {
    auto in = testing::StartControllerInstance(server_->url(), path_, options);
    if (in) {
      EXPECT_TRUE(Eventually([&] { return in->controller->Synced(); }));
    }
    return in;
  }
  void Passes(Instance& in, int n) {
    const int target = in.controller->stats().resync_passes + n;
    ASSERT_TRUE(Eventually([&] { return in.controller->stats().resync_passes >= target; }));
  }
  json::value Get(const std::string& ns, const std::string& name) {
    return sim_->store().Get(Sandboxes(), ns, name).object;
  }
  std::string Mode(const std::string& ns, const std::string& name) {
    return std::string(Get(ns, name).at("spec").at("operatingMode").as_string());
  }
  int Patches(const std::string& name = "*") {
    return sim_->RequestCount("patch", "sandboxes", name);
  }
  int64_t Rows() {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet("SELECT count(*) FROM events").getInt64();
  }
  int64_t Count(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }
  // Waits until the three running sandboxes are suspended.
  void Converge(Instance& in) {
    ASSERT_TRUE(Eventually([&] {
      return Mode("openshell-agents", "active-1") == "Suspended" &&
             Mode("openshell-agents", "active-2") == "Suspended" &&
             Mode("openshell-agents", "active-3") == "Suspended" &&
             in.controller->stats().applied >= 3;
    }));
    // The rollout's aftermath (the sandbox controller removing the suspended
    // sandboxes' pods) reaches the caches asynchronously, later under load or
    // a sanitizer: converged means every cache has caught up with the server
    // (bookmarks carry its resourceVersion) and then every sandbox was
    // reconciled again without appending anything.
    ASSERT_TRUE(Eventually([&] {
      const int64_t server_rv = sim_->store().CurrentResourceVersion();
      const bool caught_up = Eventually([&] {
        for (const auto& informer : in.controller->informers()) {
          const std::string rv = informer->stats().resource_version;
          if (rv.empty() || std::stoll(rv) < server_rv) return false;
        }
        return true;
      });
      const int64_t rows = Rows();
      const int reconciles = in.controller->stats().reconciles;
      const int sandboxes = static_cast<int>(in.controller->informers().front()->store().size());
      return caught_up && Eventually([&] {
               return in.controller->stats().reconciles >= reconciles + 2 * sandboxes;
             }) &&
             Rows() == rows;
    }));
  }

  testing::TempDir dir_;
  std::string path_ = dir_.File("journal.db");
};

TEST_F(EndToEnd, IncidentSuspendsEachRunningSandboxOnceAndConverges) {
  const log::Capture log;  // the process-wide log, as records
  StartSim();
  auto in = Start();
  Passes(*in, 2);
  EXPECT_EQ(Patches(), 0);
  RollFence();
  Converge(*in);
  Passes(*in, 10);
  EXPECT_EQ(Patches(), 3);
  for (const char* n : {"active-1", "active-2", "active-3"}) EXPECT_EQ(Patches(n), 1) << n;
  EXPECT_EQ(in->controller->stats().warnings, 3);
  // Exactly one warning record per transition, its facts in fields.
  const auto warnings = log.Matching(log::Level::kWarn);
  ASSERT_EQ(warnings.size(), 3u);
  std::set<std::string> warned;
  for (const log::Record& w : warnings) {
    EXPECT_EQ(w.msg, "fail-closed: suspended sandbox");
    EXPECT_EQ(w.Get("namespace"), "openshell-agents");
    warned.insert(w.Get("sandbox").value_or(""));
    EXPECT_EQ(w.Get("uid"),
              kube::MetadataString(Get("openshell-agents", *w.Get("sandbox")), "uid"));
    EXPECT_EQ(w.Get("reason"), "fence-stale");
    EXPECT_EQ(w.Get("fence_from"), "1");
    EXPECT_EQ(w.Get("fence_to"), "2");
    EXPECT_TRUE(w.Get("seq").has_value());
    EXPECT_EQ(w.Get("controller"), "sandbox");
    EXPECT_TRUE(w.Get("reconcile_id").has_value());
  }
  EXPECT_EQ(warned, (std::set<std::string>{"active-1", "active-2", "active-3"}));
  int held = 0;  // a held sandbox: once, at info
  for (const log::Record& r : log.Matching(log::Level::kInfo, "sandbox held"))
    held += r.Get("sandbox") == "stopped-1";
  EXPECT_EQ(held, 1);
  // One Warning per transition, and one Normal FailClosedHeld per sandbox
  // found already suspended behind the stale fence (docs/design.md#held-sandboxes).
  EXPECT_EQ(in->controller->stats().events_created, 3 + 7);
  std::map<std::string, std::set<std::string>> reasons;  // reason -> sandboxes
  for (const json::value& e :
       sim_->store()
           .List(*sim::FindKind("events.k8s.io", "events"), "openshell-agents", {}, {})
           .items)
    reasons[std::string(e.at("reason").as_string())].insert(
        std::string(e.at("regarding").at("name").as_string()));
  EXPECT_EQ(reasons["FailClosedSuspended"],
            (std::set<std::string>{"active-1", "active-2", "active-3"}));
  EXPECT_EQ(reasons["FailClosedHeld"].size(), 7u);
  EXPECT_EQ(reasons.size(), 2u);
  EXPECT_EQ(Count("SELECT count(*) FROM transitions WHERE outcome = 'applied'"), 3);
  // Zero writes to the 7 suspended sandboxes and the healthy namespace.
  for (int i = 1; i <= 7; ++i) {
    const auto obj = Get("openshell-agents", "stopped-" + std::to_string(i));
    EXPECT_EQ(obj.at("metadata").at("generation"), 1);
    EXPECT_FALSE(kube::ObjectField(kube::ObjectField(obj, "metadata"), "annotations")
                     ->contains(kube::kSeqAnnotation));
  }
  for (const char* n : {"healthy-1", "healthy-2"}) EXPECT_EQ(Mode("team-healthy", n), "Running");
  EXPECT_EQ(sim_->RequestCount("create", "events"), 3 + 7);

  // Steady state: no API requests beyond the watches, no journal rows.
  const int64_t rows = Rows();
  const int requests = sim_->RequestCount("*") - sim_->RequestCount("watch");
  Passes(*in, 10);
  EXPECT_EQ(Rows(), rows);
  EXPECT_EQ(sim_->RequestCount("*") - sim_->RequestCount("watch"), requests);
}

// A small filesystem (a 2 MiB tmpfs) filled to the last byte mid-rollout:
// the journal gives its reserve up, sheds observations, and still records
// every intent and outcome, so every stale sandbox is suspended; when space
// returns the reserve is taken back. (Mounting needs root, as CI has.)
TEST_F(EndToEnd, AFullVolumeStillSuspendsEveryStaleSandbox) {
  const std::string volume = dir_.File("volume");
  std::filesystem::create_directory(volume);
  if (std::system(
          ("mount -t tmpfs -o size=2m fencekeeper-test " + volume + " 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "cannot mount a tmpfs here (needs root); FullVolume.* cover the mechanism";
  struct Unmount {
    std::string dir;
    ~Unmount() { (void)std::system(("umount -l " + dir).c_str()); }
  } unmount{volume};
  path_ = volume + "/journal.db";
  journal::OpenOptions options;
  options.reserve_bytes = 256 << 10;
  StartSim();
  // A reader held through the start keeps the idle checkpoint from truncating
  // the WAL, as a loaded machine can: the start's rows are still in the WAL
  // when the volume is filled, and the checkpoint after the rollout would give
  // their space back too. The test checkpoints before filling, so what is free
  // at the end is only what the reserve and the filler left.
  ASSERT_TRUE(journal::Journal::Open(path_, options).ok());
  auto reader = std::make_unique<SQLite::Database>(path_, SQLite::OPEN_READONLY);
  auto snapshot = std::make_unique<SQLite::Transaction>(*reader);
  (void)reader->execAndGet("SELECT count(*) FROM events").getInt64();
  auto in = Start(options);
  Passes(*in, 2);
  snapshot.reset();
  reader.reset();
  ASSERT_TRUE(Eventually([&] { return in->journal->Checkpoint().ok(); }));
  ASSERT_FALSE(in->journal->shedding());
  // A row can still land in the WAL after that checkpoint (a worker a step
  // behind its pass did so in CI): one is written here, so every run has it.
  // The checkpoint after the rollout gives its WAL space back with the reserve.
  ASSERT_TRUE(in->journal->RecordWriterStart("a-late-write").ok());
  ASSERT_GT(FileBytesOnVolume(path_ + "-wal"), 0);
  // Fill the volume: nothing is left but the reserve.
  const std::string filler = volume + "/filler";
  {
    FILE* f = std::fopen(filler.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    const std::string block(4096, 'x');
    while (std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
    }
    std::fclose(f);
  }
  const int64_t left = journal::SpaceOf(path_)->free_bytes;
  const int64_t reserve = FileBytesOnVolume(path_ + ".reserve");
  // Read after `left`, so a write landing between the two is counted, never missed.
  const int64_t wal_at_fill = FileBytesOnVolume(path_ + "-wal");
  ASSERT_LT(left, 64 << 10);
  RollFence();
  Converge(*in);
  EXPECT_EQ(Count("SELECT count(*) FROM transitions WHERE outcome = 'applied'"), 3);
  EXPECT_TRUE(in->journal->shedding());
  EXPECT_FALSE(std::filesystem::exists(path_ + ".reserve"));  // given up
  // The volume stays full: no more is free than the filler left plus what the
  // reserve and the WAL at the fill gave back. (An update of a projection row
  // in place, not a delete and insert, may use exactly the space that was left.)
  EXPECT_LE(journal::SpaceOf(path_)->free_bytes, left + reserve + wal_at_fill);
  // Space returns: the reserve is taken back and every change is journaled again.
  std::filesystem::remove(filler);
  const journal::SpaceStatus s = in->journal->CheckSpace();
  EXPECT_TRUE(s.reserve_held);
  EXPECT_FALSE(s.shedding);
  EXPECT_TRUE(std::filesystem::exists(path_ + ".reserve"));
  in.reset();
}

TEST_F(EndToEnd, RestartOnTheSameJournalWritesNothing) {
  StartSim();
  {
    auto in = Start();
    Passes(*in, 2);
    RollFence();
    Converge(*in);
  }
  const int patches = Patches();
  const int64_t rows = Rows();
  auto again = Start();
  Passes(*again, 10);
  EXPECT_EQ(Patches(), patches);
  EXPECT_EQ(again->controller->stats().warnings, 0);
  EXPECT_EQ(Rows(), rows);
}

TEST_F(EndToEnd, RestartServedAStaleCopyOfTheSuspendedSandboxesWritesNothing) {
  StartSim();
  // What a lagging cache will show later: the sandboxes before the rollout, still Running.
  sim::ListOutcome before = sim_->store().List(Sandboxes(), "", sim::Selector(), sim::Selector());
  {
    auto in = Start();
    Passes(*in, 2);
    RollFence();
    Converge(*in);
  }
  const int patches = Patches();
  sim_->ServeStaleListOnce(Sandboxes(), before);
  // Keep the sandbox watch failing for a while, so the stale copy is what gets decided on.
  sim_->AddFault({"watch", "sandboxes", 503, 0, false, "", 4});
  auto again = Start();
  Passes(*again, 10);
  EXPECT_EQ(Patches(), patches);
  EXPECT_EQ(again->controller->stats().warnings, 0);
  EXPECT_EQ(Mode("openshell-agents", "active-1"), "Suspended");
  // The stale observations were journaled as decisions not to act.
  EXPECT_GE(Count("SELECT count(*) FROM decisions WHERE sandbox = 'active-1' AND verdict = "
                  "'suspend' AND action = 'none'"),
            1);
}

TEST_F(EndToEnd, ResumeWithCurrentFenceIsLeftAloneAndWithOldFenceIsSuspendedOnce) {
  StartSim();
  auto in = Start();
  Passes(*in, 2);
  const int64_t generation = RollFence();
  Converge(*in);
  const std::string fence_uid(sim_->store()
                                  .Get(Policies(), "openshell-agents", domain::kWorkloadPolicyName)
                                  .object.at("metadata")
                                  .at("uid")
                                  .as_string());
  auto mutate = [&](const std::string& name, std::function<void(json::object&)> f) {
    sim_->store().Mutate(
        Sandboxes(), "openshell-agents", name,
        [&](json::value& obj) -> std::optional<sim::ApiFailure> {
          f(obj.as_object());
          return std::nullopt;
        },
        false);
  };
  // OpenShell resumes active-1 properly: bootstrapping under the current fence, then records the
  // new pod.
  mutate("active-1", [&](json::object& o) {
    o["spec"].as_object()["operatingMode"] = "Running";
    auto& ann = o["metadata"].as_object()["annotations"].as_object();
    ann[kube::kBootstrappingAnnotation] = "true";
    ann[kube::kBootstrapOperationAnnotation] = "restart";
    ann[kube::kFenceUidAnnotation] = fence_uid;
    ann[kube::kFenceGenerationAnnotation] = std::to_string(generation);
  });
  const auto pod = sim_->store().Get(*sim::FindKind("", "pods"), "openshell-agents", "active-1");
  ASSERT_TRUE(pod.ok());
  mutate("active-1", [&](json::object& o) {
    auto& ann = o["metadata"].as_object()["annotations"].as_object();
    ann.erase(kube::kBootstrappingAnnotation);
    ann.erase(kube::kBootstrapOperationAnnotation);
    ann[kube::kWorkloadUidAnnotation] = pod.object.at("metadata").at("uid");
  });
  // Someone sets active-2 Running again with the old fence recorded: a new episode.
  mutate("active-2", [](json::object& o) { o["spec"].as_object()["operatingMode"] = "Running"; });
  ASSERT_TRUE(Eventually([&] { return Mode("openshell-agents", "active-2") == "Suspended"; }));
  Passes(*in, 10);
  EXPECT_EQ(Mode("openshell-agents", "active-1"), "Running");
  EXPECT_EQ(Patches("active-1"), 1);  // only the original rollout's
  // active-2: the rollout's suspend and exactly one more that landed. The
  // agent-sandbox status write can race the new PATCH into a 409; that attempt
  // is journaled as a conflict and re-decided, never retried blindly.
  EXPECT_EQ(
      Count("SELECT count(*) FROM transitions WHERE sandbox = 'active-2' AND outcome = 'applied'"),
      2);
  EXPECT_EQ(Patches("active-2"), 2 + Count("SELECT count(*) FROM transitions WHERE sandbox = "
                                           "'active-2' AND outcome = 'conflict'"));
  EXPECT_EQ(in->controller->stats().warnings, 4);  // 3 from the rollout, 1 for the new episode
}

TEST_F(EndToEnd, FaultsEarlyOnStillEndWithOneAppliedTransitionEach) {
  sim::SimOptions o;
  o.drop_watch_after_events = 7;  // watches keep dropping
  StartSim("incident-3525", o,
           {{"patch", "sandboxes", 503, 0, false, "", 2},
            {"list", "*", 429, 1, false, "", 1},
            {"list", "pods", 500, 0, false, "", 1}});
  sim_->ExpireHistory();
  auto in = Start();
  // A 410 for whoever resumes from before now.
  sim_->ExpireHistory();
  sim_->DropWatches();
  RollFence();
  Converge(*in);
  Passes(*in, 5);
  for (const char* n : {"active-1", "active-2", "active-3"}) {
    EXPECT_EQ(Mode("openshell-agents", n), "Suspended") << n;
    EXPECT_EQ(
        Count(std::string(
                  "SELECT count(*) FROM transitions WHERE outcome = 'applied' AND sandbox = '") +
              n + "'"),
        1)
        << n;
  }
  EXPECT_EQ(Count("SELECT count(*) FROM transitions WHERE outcome = 'pending'"), 0);
  // A 503 is no refusal: the PATCH's result is unknown, the sandbox is read
  // back and the same intent sent again, so no transition ends as failed.
  EXPECT_EQ(Count("SELECT count(*) FROM transitions WHERE outcome = 'failed'"), 0);
  EXPECT_EQ(Count("SELECT count(*) FROM transitions WHERE outcome = 'applied'"), 3);
}

// A 409 is resolved by reading the sandbox, never by a blind retry. Here the
// 409 is injected while the object is unchanged: the read shows the same
// resourceVersion and no seq annotation, so the PATCH has not landed and the
// identical conditional PATCH (same seq) is sent once more and applies.
TEST_F(EndToEnd, ConflictIsReadAgainAndDecidedAgainNotRetriedBlindly) {
  StartSim("incident-3525", {}, {{"patch", "sandboxes", 409, 0, false, "", 1}});
  auto in = Start();
  Passes(*in, 2);
  RollFence();
  Converge(*in);
  EXPECT_EQ(Patches(), 4);  // three sandboxes, one of them twice: after the 409 it was read again
  EXPECT_EQ(in->controller->stats().warnings, 3);           // one per transition, not per attempt
  EXPECT_EQ(Count("SELECT count(*) FROM transitions"), 3);  // the re-send is the same intent
  EXPECT_EQ(Count("SELECT count(*) FROM transitions WHERE outcome = 'applied'"), 3);
  EXPECT_EQ(sim_->RequestCount("get", "sandboxes"), 1);  // the re-read
  EXPECT_EQ(Count("SELECT count(*) FROM transitions WHERE outcome = 'pending'"), 0);
}

TEST_F(EndToEnd, JournalThatCannotBeWrittenSendsNoPatchWithoutADurableIntent) {
  StartSim();
  // A tiny page cap: the journal fills up as the rollout is recorded.
  journal::OpenOptions jo;
  auto probe = journal::Journal::Open(path_);
  ASSERT_TRUE(probe.ok());
  probe->reset();
  SQLite::Database db(path_, SQLite::OPEN_READONLY);
  const int64_t pages = db.execAndGet("PRAGMA page_count").getInt64();
  jo.max_page_count = pages + 2;
  auto full = journal::Journal::Open(path_, jo);
  ASSERT_TRUE(full.ok());
  kube::ClusterConfig cfg;
  cfg.server = server_->url();
  auto client = kube::ApiClient::Create(cfg);
  ASSERT_TRUE(client.ok());
  SandboxControllerOptions o;
  o.resync = 30ms;
  o.retry_base = 10ms;
  o.retry_max = 50ms;
  auto c = SandboxController::WithInformers(**client, **full, o);
  c->Start();
  RollFence();
  ASSERT_TRUE(Eventually([&] { return !c->JournalWritable() && c->stats().journal_errors > 0; }));
  // Every PATCH sent was preceded by a durable intent. (The controller counts
  // a PATCH as it sends it, the server as it arrives: equal once it is in.)
  EXPECT_TRUE(Eventually([&] { return Patches() == c->stats().patches; }))
      << Patches() << " arrived, " << c->stats().patches << " sent";
  EXPECT_LE(Patches(), static_cast<int>(Count("SELECT count(*) FROM transitions")));
  c->Stop();
}

}  // namespace
}  // namespace fk::reconciler
