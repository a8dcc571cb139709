// The real controller against the simulator with every kind of hostile
// object at once (docs/design.md#bad-objects-stay-local, issue 9): bad
// objects stay local, every stale sandbox is suspended once; PATCHes and
// journal rows are counted.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <pthread.h>
#include <boost/json.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <sstream>

#include "common/log.h"
#include "controller_instance.h"
#include "fake_transport.h"
#include "hostile_objects.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/json.h"
#include "kube/json_fields.h"
#include "kube/objects.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/metrics.h"
#include "reconciler/sandbox_controller.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "sim/server.h"
#include "sim/store.h"
#include "test_support.h"

namespace fk {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using fk::testing::Event;
using fk::testing::Eventually;
using fk::testing::Load;
using fk::testing::Nest;
using kube::kMaxObjectDepth;

// ---- the controller against hostile objects ---------------------------------------------

// Every sandbox here but healthy-* runs under a fence it was not admitted
// to: each must be suspended exactly once, whatever else its JSON holds.
std::string HostileScenario(const std::string& long_name) {
  std::string s = R"(
namespaces:
  - name: agents
    fence: {boundaryPort: 5500}
    sandboxes:
      - {name: healthy-1, mode: Running}
      - {name: healthy-2, mode: Running}
)";
  for (const std::string& name :
       {std::string("stale-1"), std::string("stale-2"), std::string("deep-64"),
        std::string("deep-5000"), std::string("big-annotation"), std::string("bad-utf8"),
        std::string("big-numbers"), std::string("control-chars"), std::string("dup-keys"),
        std::string("wrong-annotations"), std::string("wrong-spec"), std::string("wrong-values"),
        long_name}) {
    s += "      - {name: " + name + ", mode: Running, admittedFenceGeneration: 0}\n";
  }
  return s;
}

// Nest(depth) as a value, built through a value_stack in linear time.
json::value NestValue(int depth) {
  json::value_stack st;
  st.reset();
  for (int i = 0; i < depth; ++i) st.push_key("a");
  st.push_int64(1);
  for (int i = 0; i < depth; ++i) st.push_object(1);
  return st.release();
}

class HostileCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::SimOptions o;
    o.bookmark_interval = 50ms;
    sim_ = std::make_unique<sim::Simulator>(o);
    ASSERT_TRUE(Load(*sim_, HostileScenario(long_name_)).ok());
    server_ = std::make_unique<sim::Server>(*sim_, sim::ServerOptions{});
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override { instance_.reset(); }
  static const sim::ResourceKind& Sandboxes() {
    return *sim::FindKind("agents.x-k8s.io", "sandboxes");
  }
  // Edits a stored sandbox (the simulator holds any JSON value).
  void Edit(const std::string& name, const std::function<void(json::object&)>& edit) {
    auto o = sim_->store().Mutate(
        Sandboxes(), "agents", name,
        [&](json::value& obj) -> std::optional<sim::ApiFailure> {
          edit(obj.as_object());
          return std::nullopt;
        },
        false);
    ASSERT_TRUE(o.ok()) << name;
  }
  json::object& Annotations(json::object& sb) {
    return sb["metadata"].as_object()["annotations"].as_object();
  }
  // A new stale sandbox like stale-1, for the watch stream.
  void CreateLike(const std::string& name, const std::function<void(json::object&)>& edit) {
    json::value sb = sim_->store().Get(Sandboxes(), "agents", "stale-1").object;
    json::object& meta = sb.as_object()["metadata"].as_object();
    meta = json::object{
        {"name", name}, {"labels", meta["labels"]}, {"annotations", meta["annotations"]}};
    edit(sb.as_object());
    ASSERT_TRUE(sim_->store().Create(Sandboxes(), "agents", std::move(sb)).ok()) << name;
  }
  std::string Uid(const std::string& name) {
    return kube::MetadataString(sim_->store().Get(Sandboxes(), "agents", name).object, "uid");
  }
  std::string Mode(const std::string& name) {
    auto o = sim_->store().Get(Sandboxes(), "agents", name);
    const json::object* spec = kube::ObjectField(o.object, "spec");
    return kube::StringField(spec, "operatingMode").value_or("?");
  }
  void StartController() {
    instance_ = testing::StartControllerInstance(server_->url(), path_);
    ASSERT_NE(instance_, nullptr);
    controller_ = instance_->controller.get();
  }
  int64_t Rows(const std::string& sql, const std::string& name) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, sql);
    q.bind(1, name);
    return q.executeStep() ? q.getColumn(0).getInt64() : -1;
  }
  const kube::Informer& SandboxInformer() { return *controller_->informers()[0]; }

  const std::string long_name_ = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                                 std::string(63, 'c') + "." + std::string(61, 'd');
  testing::TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<sim::Server> server_;
  std::unique_ptr<testing::ControllerInstance> instance_;
  reconciler::SandboxController* controller_ = nullptr;  // instance_'s
};

// Records of skipped objects that match, to count them.
int Skipped(const log::Capture& log, const std::string& context, const std::string& name,
            const std::string& uid_prefix, const std::string& error_prefix) {
  int n = 0;
  for (const log::Record& r : log.Matching(log::Level::kWarn, "skipping an undecodable object")) {
    n += r.Get("informer") == "sandboxes/*" && r.Get("context") == context &&
         r.Get("name") == name && r.Get("uid").value_or("").rfind(uid_prefix, 0) == 0 &&
         r.Get("error").value_or("").rfind(error_prefix, 0) == 0;
  }
  return n;
}

TEST_F(HostileCluster, BadObjectsStayLocalAndEveryStaleSandboxIsSuspendedOnce) {
  // In the store (so they can be PATCHed): odd but valid JSON.
  Edit("deep-64", [](json::object& sb) { sb["spec"].as_object()["extra"] = NestValue(62); });
  Edit("deep-5000", [](json::object& sb) { sb["spec"].as_object()["extra"] = NestValue(4998); });
  Edit("big-annotation",
       [&](json::object& sb) { Annotations(sb)["example.com/blob"] = std::string(1 << 20, 'x'); });
  Edit("bad-utf8",
       [&](json::object& sb) { Annotations(sb)["example.com/bytes"] = "\xff\xfe\xc3("; });
  Edit("big-numbers", [](json::object& sb) {
    sb["spec"].as_object()["huge"] = 1e300;
    sb["spec"].as_object()["unsigned"] = std::numeric_limits<uint64_t>::max();
  });
  Edit("control-chars", [&](json::object& sb) {
    Annotations(sb)["example.com/note"] = std::string("a\nfake log line\r\x01\x1b[31m\0z", 24);
  });
  // Wrong types in what decide reads: fail closed, so suspended like the rest.
  Edit("wrong-annotations",
       [](json::object& sb) { sb["metadata"].as_object()["annotations"] = 42; });
  Edit("wrong-spec", [](json::object& sb) { sb["spec"].as_object()["operatingMode"] = 7; });
  Edit("wrong-values", [&](json::object& sb) {
    Annotations(sb)[kube::kFenceGenerationAnnotation] = 0;
    Annotations(sb)[kube::kFenceUidAnnotation] = json::array{"x"};
    sb["metadata"].as_object()["generation"] = "two";
  });
  std::vector<std::string> suspended = {
      "stale-1",    "stale-2",      "deep-64",       "deep-5000", "big-annotation",
      "bad-utf8",   "big-numbers",  "control-chars", "dup-keys",  "wrong-annotations",
      "wrong-spec", "wrong-values", long_name_};

  // The first sandbox list is the real one with raw hostile items spliced in
  // (JSON the simulator cannot hold: duplicate keys, too deep, wrong shapes).
  std::string list =
      sim::HandleRequest(*sim_,
                         {"GET",
                          "/apis/agents.x-k8s.io/v1beta1/namespaces/agents/"
                          "sandboxes?labelSelector=openshell.ai%2Fmanaged-by%3Dopenshell",
                          "", ""},
                         "sim")
          .body;
  sim_->ResetCounts();
  const std::string dup = R"("name":"dup-keys")";
  ASSERT_NE(list.find(dup), std::string::npos);
  list.replace(list.find(dup), dup.size(), R"("name":"someone-else","name":"dup-keys")");
  const std::string too_deep = R"({"metadata":{"name":"too-deep-in-list","namespace":"agents",)"
                               R"("uid":"u-too-deep"},"spec":)" +
                               Nest(kMaxObjectDepth) + "}";
  const size_t items_end = list.rfind(']');
  list.insert(items_end, "," + too_deep + R"(,42,{"metadata":{"name":["x"]}})");
  sim::FaultRule rule;
  rule.verb = "list";
  rule.resource = "sandboxes";
  rule.status = 200;
  rule.body = list;
  sim_->AddFault(rule);

  const log::Capture log;
  StartController();
  ASSERT_TRUE(Eventually([&] { return controller_->Synced(); }));

  // On the watch: the same kinds of objects arriving as events.
  CreateLike("late-deep-5000",
             [](json::object& sb) { sb["spec"].as_object()["x"] = NestValue(4998); });
  CreateLike("late-big", [&](json::object& sb) {
    Annotations(sb)["example.com/blob"] = std::string(1 << 20, 'y');
  });
  CreateLike("late-utf8",
             [&](json::object& sb) { Annotations(sb)["example.com/bytes"] = "\xc3\x28"; });
  suspended.insert(suspended.end(), {"late-deep-5000", "late-big", "late-utf8"});
  // A too-deep DELETED of healthy-2 (right uid) still removes it from the
  // cache; a too-deep MODIFIED of healthy-1 keeps its last state.
  const std::string healthy2 = R"({"metadata":{"name":"healthy-2","namespace":"agents","uid":")" +
                               Uid("healthy-2") + R"(","resourceVersion":"1"},"spec":)" +
                               Nest(kMaxObjectDepth) + "}";
  const std::string healthy1 = R"({"metadata":{"name":"healthy-1","namespace":"agents","uid":")" +
                               Uid("healthy-1") + R"(","resourceVersion":"1"},"spec":)" +
                               Nest(kMaxObjectDepth) + "}";
  // Seen by the informer: its watch is open, and the lines below reach it.
  ASSERT_TRUE(
      Eventually([&] { return SandboxInformer().store().Get("agents", "late-utf8") != nullptr; }));
  sim_->InjectWatchLine(Event("MODIFIED", healthy1));
  sim_->InjectWatchLine(Event("DELETED", healthy2));
  sim_->InjectWatchLine("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"");

  // (Counting PATCHes, not reading the objects: a copy of a deep one is slow.)
  ASSERT_TRUE(Eventually([&] {
    for (const auto& name : suspended) {
      if (sim_->RequestCount("patch", "sandboxes", name) == 0) return false;
    }
    return controller_->stats().applied >= static_cast<int>(suspended.size()) &&
           SandboxInformer().store().Get("agents", "healthy-2") == nullptr;
  })) <<
      [&] {
        std::string s;
        for (const auto& name : suspended) s += name.substr(0, 20) + "=" + Mode(name) + " ";
        return s;
      }();
  const int passes = controller_->stats().resync_passes;
  ASSERT_TRUE(Eventually([&] { return controller_->stats().resync_passes >= passes + 5; }));

  // One PATCH per sandbox, and one more only for a recorded conflict: the
  // simulated agent-sandbox controller may write a new sandbox between the
  // informer's event and the PATCH, whose resourceVersion then no longer
  // matches (409; re-decided on the fresh object). A PATCH sent twice
  // without one would fail here.
  int conflicts = 0;
  for (const auto& name : suspended) {
    EXPECT_EQ(Mode(name), "Suspended") << name;
    const int conflicted = static_cast<int>(
        Rows("SELECT count(*) FROM transitions WHERE sandbox = ? AND outcome = 'conflict'", name));
    conflicts += conflicted;
    EXPECT_EQ(sim_->RequestCount("patch", "sandboxes", name), 1 + conflicted) << name;
    EXPECT_EQ(
        Rows("SELECT count(*) FROM transitions WHERE sandbox = ? AND outcome = 'applied'", name), 1)
        << name;
  }
  EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"),
            static_cast<int>(suspended.size()) + conflicts);
  EXPECT_EQ(Mode("healthy-1"), "Running");
  EXPECT_NE(SandboxInformer().store().Get("agents", "healthy-1"), nullptr);
  // The three bad list items and the three bad lines, each once in the log
  // with what identity could be read.
  EXPECT_GE(SandboxInformer().stats().decode_errors, 6);
  EXPECT_EQ(Skipped(log, "list item", "too-deep-in-list", "u-too-deep", "item cannot be decoded"),
            1);
  EXPECT_EQ(Skipped(log, "DELETED watch event", "healthy-2", "", ""), 1);
  EXPECT_GE(reconciler::DecodeErrorTotals(controller_->informers())["sandboxes"], 6);
  EXPECT_TRUE(controller_->Synced());
  // The controller's threads log into `log`: they stop before it ends (TSan
  // saw a worker read the logger the capture's end replaced).
  instance_.reset();
}

}  // namespace
}  // namespace fk
