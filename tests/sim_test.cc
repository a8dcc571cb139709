// The simulator's semantics without HTTP: merge and JSON patch, generation
// and resourceVersion rules, no-op writes, conflicts, watch history and 410,
// the agent-sandbox emulation, version conversion, faults and scenarios, and
// the HTTP server's request handling called in-process (sim/handler.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>

#include <boost/json.hpp>

#include "domain/event.h"
#include "kube/objects.h"
#include "sim/handler.h"
#include "sim/patch.h"
#include "sim/scenario.h"
#include "sim/simulator.h"
#include "sim/store.h"
#include "test_support.h"

namespace fk::sim {
namespace {
namespace json = boost::json;

json::value J(const char* text) { return json::parse(text); }

// RFC 7386 appendix A, every example.
TEST(MergePatch, Rfc7386Examples) {
  const std::tuple<const char*, const char*, const char*> cases[] = {
      {R"({"a":"b"})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"b"})", R"({"b":"c"})", R"({"a":"b","b":"c"})"},
      {R"({"a":"b"})", R"({"a":null})", R"({})"},
      {R"({"a":"b","b":"c"})", R"({"a":null})", R"({"b":"c"})"},
      {R"({"a":["b"]})", R"({"a":"c"})", R"({"a":"c"})"},
      {R"({"a":"c"})", R"({"a":["b"]})", R"({"a":["b"]})"},
      {R"({"a":{"b":"c"}})", R"({"a":{"b":"d","c":null}})", R"({"a":{"b":"d"}})"},
      {R"({"a":[{"b":"c"}]})", R"({"a":[1]})", R"({"a":[1]})"},
      {R"(["a","b"])", R"(["c","d"])", R"(["c","d"])"},
      {R"({"a":"b"})", R"(["c"])", R"(["c"])"},
      {R"({"a":"foo"})", R"(null)", R"(null)"},
      {R"({"a":"foo"})", R"("bar")", R"("bar")"},
      {R"({"e":null})", R"({"a":1})", R"({"e":null,"a":1})"},
      {R"([1,2])", R"({"a":"b","c":null})", R"({"a":"b"})"},
      {R"({})", R"({"a":{"bb":{"ccc":null}}})", R"({"a":{"bb":{}}})"},
  };
  for (const auto& [target, patch, want] : cases) {
    EXPECT_EQ(MergePatch(J(target), J(patch)), J(want)) << target << " + " << patch;
  }
}

TEST(JsonPatch, AppliesEveryOperation) {
  json::value doc =
      J(R"({"metadata":{"annotations":{"agents.x-k8s.io/pod-name":"p"}},"list":[1,2,3]})");
  const auto err = ApplyJsonPatch(doc, J(R"([
      {"op":"test","path":"/metadata/annotations/agents.x-k8s.io~1pod-name","value":"p"},
      {"op":"add","path":"/list/1","value":9},
      {"op":"add","path":"/list/-","value":4},
      {"op":"remove","path":"/list/0"},
      {"op":"replace","path":"/metadata/annotations/agents.x-k8s.io~1pod-name","value":"q"},
      {"op":"copy","from":"/list/0","path":"/copied"},
      {"op":"move","from":"/copied","path":"/moved"}])"));
  ASSERT_FALSE(err) << err->message;
  EXPECT_EQ(
      doc,
      J(R"({"metadata":{"annotations":{"agents.x-k8s.io/pod-name":"q"}},"list":[9,2,3,4],"moved":9})"));
}

TEST(JsonPatch, FailedTestIs422AndMalformedIs400) {
  json::value doc = J(R"({"a":1})");
  const auto status = [&](const char* ops) {
    const auto err = ApplyJsonPatch(doc, J(ops));
    return err ? err->http_status : 0;
  };
  EXPECT_EQ(status(R"([{"op":"test","path":"/a","value":2}])"), 422);
  EXPECT_EQ(status(R"([{"op":"remove","path":"/missing"}])"), 422);
  EXPECT_EQ(status(R"({"op":"add"})"), 400);
  EXPECT_EQ(status(R"([{"op":"frobnicate","path":"/a"}])"), 400);
}

class StoreTest : public ::testing::Test {
 protected:
  StoreTest() : sim_(Options()) {
    sim_.store().Watch(*sandboxes_, "", std::nullopt,
                       [this](const StoredEvent& e) { events_.push_back(e); });
  }
  static SimOptions Options() {
    SimOptions o;
    o.emulate_agent_sandbox = false;
    o.history_limit = 50;
    return o;
  }
  Outcome CreateSandbox(const std::string& name) {
    return sim_.store().Create(*sandboxes_, "ns",
                               J((R"({"metadata":{"name":")" + name +
                                  R"("},"spec":{"operatingMode":"Running"},"status":{"x":1}})")
                                     .c_str()));
  }
  static int64_t Gen(const Outcome& o) {
    return o.object.at("metadata").at("generation").as_int64();
  }
  static std::string Rv(const Outcome& o) {
    return std::string(o.object.at("metadata").at("resourceVersion").as_string());
  }
  Outcome Merge(const std::string& name, const char* patch, bool status = false) {
    return sim_.store().Mutate(
        *sandboxes_, "ns", name,
        [&](json::value& obj) -> std::optional<ApiFailure> {
          obj = MergePatch(std::move(obj), J(patch));
          return std::nullopt;
        },
        status);
  }

  Simulator sim_;
  const ResourceKind* sandboxes_ = FindKind("agents.x-k8s.io", "sandboxes");
  std::vector<StoredEvent> events_;
};

TEST_F(StoreTest, CreateSetsIdentityGenerationOneAndDropsStatus) {
  Outcome o = CreateSandbox("a");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(Gen(o), 1);
  EXPECT_FALSE(o.object.at("metadata").at("uid").as_string().empty());
  EXPECT_FALSE(
      o.object.as_object().contains("status"));  // status subresource: POSTed status is dropped
  EXPECT_EQ(CreateSandbox("a").failure->code, 409);
  EXPECT_EQ(CreateSandbox("a").failure->reason, "AlreadyExists");
}

// replay shows the first 8 characters of a UID: they must tell objects apart,
// as they do for a real API server's random UIDs.
TEST_F(StoreTest, UidsAreUniqueAndDifferInTheirFirstEightCharacters) {
  std::set<std::string> uids, heads;
  for (int i = 0; i < 200; ++i) {
    const std::string uid(
        CreateSandbox("sb-" + std::to_string(i)).object.at("metadata").at("uid").as_string());
    uids.insert(uid);
    heads.insert(uid.substr(0, 8));
  }
  EXPECT_EQ(uids.size(), 200u);
  EXPECT_EQ(heads.size(), 200u);
}

TEST_F(StoreTest, GenerationMovesOnlyWithSpecAndResourceVersionWithEveryChange) {
  Outcome a = CreateSandbox("a");
  Outcome labelled = Merge("a", R"({"metadata":{"labels":{"x":"y"},"annotations":{"k":"v"}}})");
  EXPECT_EQ(Gen(labelled), 1);
  EXPECT_GT(std::stoll(Rv(labelled)), std::stoll(Rv(a)));
  Outcome spec = Merge("a", R"({"spec":{"operatingMode":"Suspended"}})");
  EXPECT_EQ(Gen(spec), 2);
  Outcome status = Merge("a", R"({"status":{"conditions":[]}})", /*status=*/true);
  EXPECT_EQ(Gen(status), 2);
  EXPECT_GT(std::stoll(Rv(status)), std::stoll(Rv(spec)));
  // A spec change sent to /status is ignored, and status sent to the main resource too.
  Outcome ignored = Merge("a", R"({"spec":{"operatingMode":"Running"}})", /*status=*/true);
  EXPECT_EQ(ignored.object.at("spec").at("operatingMode"), "Suspended");
  Outcome ignored2 = Merge("a", R"({"status":{"conditions":[1]}})");
  EXPECT_EQ(ignored2.object.at("status").at("conditions"), json::array{});
}

TEST_F(StoreTest, NoOpWritesProduceNoResourceVersionAndNoEvent) {
  Outcome a = CreateSandbox("a");
  const size_t before = events_.size();
  Outcome same = Merge("a", R"({"spec":{"operatingMode":"Running"}})");
  EXPECT_TRUE(same.ok());
  EXPECT_FALSE(same.changed);
  EXPECT_EQ(Rv(same), Rv(a));
  EXPECT_EQ(events_.size(), before);
  EXPECT_EQ(sim_.store().CurrentResourceVersion(), std::stoll(Rv(a)));
}

TEST_F(StoreTest, StaleResourceVersionIsAConflictAndPutNeedsOne) {
  Outcome a = CreateSandbox("a");
  Merge("a", R"({"metadata":{"labels":{"x":"y"}}})");
  const std::string stale = Rv(a);
  Outcome conflict = Merge("a", (R"({"metadata":{"resourceVersion":")" + stale +
                                 R"("},"spec":{"operatingMode":"Suspended"}})")
                                    .c_str());
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.failure->code, 409);
  EXPECT_EQ(conflict.failure->reason, "Conflict");
  EXPECT_NE(conflict.failure->message.find("the object has been modified"), std::string::npos);
  Outcome no_rv = sim_.store().Update(*sandboxes_, "ns", "a",
                                      J(R"({"metadata":{"name":"a"},"spec":{}})"), false);
  ASSERT_FALSE(no_rv.ok());
  EXPECT_EQ(no_rv.failure->code, 422);
  EXPECT_EQ(sim_.store().Get(*sandboxes_, "ns", "missing").failure->code, 404);
}

TEST_F(StoreTest, WatchFromExpiredResourceVersionIsGone) {
  Outcome a = CreateSandbox("a");
  const int64_t rv = std::stoll(Rv(a));
  Merge("a", R"({"metadata":{"labels":{"x":"1"}}})");
  std::vector<StoredEvent> replay;
  auto w =
      sim_.store().Watch(*sandboxes_, "", rv, [&](const StoredEvent& e) { replay.push_back(e); });
  ASSERT_FALSE(w.failure);
  ASSERT_EQ(replay.size(), 1u);  // only what came after rv
  EXPECT_EQ(replay[0].type, "MODIFIED");
  sim_.ExpireHistory();
  auto expired = sim_.store().Watch(*sandboxes_, "", rv, [](const StoredEvent&) {});
  ASSERT_TRUE(expired.failure);
  EXPECT_EQ(expired.failure->code, 410);
  EXPECT_EQ(expired.failure->reason, "Expired");
  // The history limit forgets old events the same way.
  for (int i = 0; i < 60; ++i)
    Merge("a", (R"({"metadata":{"labels":{"n":")" + std::to_string(i) + R"("}}})").c_str());
  EXPECT_TRUE(sim_.store()
                  .Watch(*sandboxes_, "", sim_.store().CurrentResourceVersion() - 55,
                         [](const StoredEvent&) {})
                  .failure);
  EXPECT_FALSE(sim_.store()
                   .Watch(*sandboxes_, "", sim_.store().CurrentResourceVersion() - 10,
                          [](const StoredEvent&) {})
                   .failure);
}

TEST(AgentSandboxEmulation, SuspendDeletesThePodAndResumeMakesANewOne) {
  Simulator sim;
  const ResourceKind* sandboxes = FindKind("agents.x-k8s.io", "sandboxes");
  const ResourceKind* pods = FindKind("", "pods");
  ASSERT_TRUE(sim.store()
                  .Create(*sandboxes, "ns",
                          J(R"({"metadata":{"name":"a"},"spec":{"operatingMode":"Running"}})"))
                  .ok());
  Outcome pod = sim.store().Get(*pods, "ns", "a");
  ASSERT_TRUE(pod.ok());
  const auto first_uid = pod.object.at("metadata").at("uid");
  auto cond = [&](const char* type) {
    Outcome s = sim.store().Get(*sandboxes, "ns", "a");
    for (const auto& c : s.object.at("status").at("conditions").as_array()) {
      if (c.at("type") == type) return std::string(c.at("status").as_string());
    }
    return std::string("absent");
  };
  EXPECT_EQ(cond("Ready"), "True");
  auto set_mode = [&](const char* mode) {
    return sim.store().Mutate(
        *sandboxes, "ns", "a",
        [&](json::value& o) -> std::optional<ApiFailure> {
          o.at("spec").as_object()["operatingMode"] = mode;
          return std::nullopt;
        },
        false);
  };
  set_mode("Suspended");
  EXPECT_FALSE(sim.store().Get(*pods, "ns", "a").ok());
  EXPECT_EQ(cond("Suspended"), "True");
  EXPECT_EQ(cond("Ready"), "False");
  set_mode("Running");
  Outcome again = sim.store().Get(*pods, "ns", "a");
  ASSERT_TRUE(again.ok());
  EXPECT_NE(again.object.at("metadata").at("uid"), first_uid);
  EXPECT_EQ(cond("Suspended"), "False");
  // Deleting the sandbox garbage-collects its pod.
  sim.store().Delete(*sandboxes, "ns", "a", std::nullopt, std::nullopt);
  EXPECT_FALSE(sim.store().Get(*pods, "ns", "a").ok());
}

TEST(Conversion, V1alpha1ReplicasMapToOperatingMode) {
  const ResourceKind* sandboxes = FindKind("agents.x-k8s.io", "sandboxes");
  json::value stored =
      J(R"({"apiVersion":"agents.x-k8s.io/v1beta1","spec":{"operatingMode":"Suspended"}})");
  json::value alpha = Simulator::ToVersion(*sandboxes, stored, "v1alpha1");
  EXPECT_EQ(alpha.at("apiVersion"), "agents.x-k8s.io/v1alpha1");
  EXPECT_EQ(alpha.at("spec").at("replicas"), 0);
  EXPECT_FALSE(alpha.at("spec").as_object().contains("operatingMode"));
  alpha.at("spec").as_object()["replicas"] = 1;
  json::value back = Simulator::FromVersion(*sandboxes, alpha, "v1alpha1");
  EXPECT_EQ(back.at("spec").at("operatingMode"), "Running");
  EXPECT_EQ(back.at("apiVersion"), "agents.x-k8s.io/v1beta1");
}

TEST(Faults, RulesMatchAndCountDown) {
  Simulator sim;
  sim.AddFault({"patch", "sandboxes", 503, 0, false, "", 2});
  sim.AddFault({"*", "*", 429, 1, false, "", -1});
  EXPECT_EQ(sim.TakeFault("patch", "sandboxes")->status, 503);
  EXPECT_EQ(sim.TakeFault("patch", "sandboxes")->status, 503);
  EXPECT_EQ(sim.TakeFault("patch", "sandboxes")->status, 429);  // the first rule is used up
  EXPECT_EQ(sim.TakeFault("get", "pods")->status, 429);
  sim.ClearFaults();
  EXPECT_FALSE(sim.TakeFault("get", "pods"));
}

// The HTTP server's request handling, called in-process: no sockets, no threads.
TEST(SimHandler, AnswersVerbsConflictsAndFaultsWithoutAServer) {
  Simulator sim;
  const std::string sandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";
  auto call = [&](const char* method, const std::string& target, const std::string& body = "",
                  const std::string& type = "application/json") {
    return HandleRequest(sim, ApiRequest{method, target, body, type}, "127.0.0.1:6443");
  };

  const ApiReply created =
      call("POST", sandboxes, R"({"apiVersion":"agents.x-k8s.io/v1beta1","kind":"Sandbox",
      "metadata":{"name":"a"},"spec":{"operatingMode":"Running"}})");
  ASSERT_EQ(created.status, 201) << created.body;
  const ApiReply got = call("GET", sandboxes + "/a");
  ASSERT_EQ(got.status, 200) << got.body;
  EXPECT_EQ(got.content_type, "application/json");
  const json::value object = json::parse(got.body);
  EXPECT_EQ(object.at("metadata").at("generation"), 1);
  const std::string rv(object.at("metadata").at("resourceVersion").as_string());

  auto suspend = [&](const std::string& with_rv) {
    return call("PATCH", sandboxes + "/a",
                R"({"metadata":{"resourceVersion":")" + with_rv +
                    R"("},"spec":{"operatingMode":"Suspended"}})",
                "application/merge-patch+json");
  };
  const ApiReply conflict = suspend(std::to_string(std::stoll(rv) - 1));
  EXPECT_EQ(conflict.status, 409) << conflict.body;
  EXPECT_EQ(json::parse(conflict.body).at("reason"), "Conflict");
  const ApiReply patched = suspend(rv);
  ASSERT_EQ(patched.status, 200) << patched.body;
  const json::value after = json::parse(patched.body);
  EXPECT_EQ(after.at("metadata").at("generation"), 2);
  EXPECT_EQ(after.at("spec").at("operatingMode"), "Suspended");
  EXPECT_EQ(sim.RequestCount("patch", "sandboxes"), 2);

  sim.AddFault({"get", "sandboxes", 503, 7, false, "", 1});
  const ApiReply fault = call("GET", sandboxes + "/a");
  EXPECT_EQ(fault.status, 503);
  EXPECT_EQ(fault.retry_after_seconds, 7);
  EXPECT_EQ(json::parse(fault.body).at("reason"), "ServiceUnavailable");
  EXPECT_EQ(call("GET", sandboxes + "/a").status, 200);  // the fault was used up

  // A watch needs a stream: refused, neither counted nor taking a fault.
  sim.AddFault({"watch", "*", 500, 0, false, "", 1});
  EXPECT_EQ(call("GET", sandboxes + "?watch=true").status, 400);
  EXPECT_EQ(sim.RequestCount("watch"), 0);
  EXPECT_EQ(sim.TakeFault("watch", "sandboxes")->status, 500);
  // Discovery names the address it was given.
  EXPECT_NE(call("GET", "/api").body.find("127.0.0.1:6443"), std::string::npos);
}

// Boolean query parameters as the API server reads them
// (Convert_Slice_string_To_bool): the official Python client sends
// watch=True, and a watch it is.
TEST(SimHandler, BooleanParametersAreReadAsTheApiServerReadsThem) {
  for (const char* yes : {"true", "True", "TRUE", "1", "", "yes", "2"}) {
    EXPECT_TRUE(ParseTarget(std::string("/api?watch=") + yes).Flag("watch")) << yes;
  }
  EXPECT_TRUE(ParseTarget("/api?watch").Flag("watch"));
  for (const char* no : {"false", "False", "FALSE", "0"}) {
    EXPECT_FALSE(ParseTarget(std::string("/api?watch=") + no).Flag("watch")) << no;
  }
  EXPECT_FALSE(ParseTarget("/api?limit=1").Flag("watch"));  // absent
  EXPECT_TRUE(ParseTarget("/api?sendInitialEvents=false").Has("sendInitialEvents"));

  Simulator sim;
  const std::string sandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";
  auto call = [&](const std::string& target) {
    return HandleRequest(sim, ApiRequest{"GET", target, "", ""}, "127.0.0.1:6443");
  };
  // A watch needs a stream: HandleRequest refuses it (400), a list answers 200.
  EXPECT_EQ(call(sandboxes + "?watch=True").status, 400);
  EXPECT_EQ(call(sandboxes + "?watch=").status, 400);
  EXPECT_EQ(call(sandboxes + "?watch=False").status, 200);
  EXPECT_EQ(call(sandboxes + "?watch=0").status, 200);
}

// limit/continue as the API server serves them: pages in key order at one
// resourceVersion, "" continue on the last page, and a token older than the
// retained history is 410 Expired.
TEST(SimHandler, ListsInPagesAndExpiresOldContinueTokens) {
  Simulator sim;
  const std::string sandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";
  auto call = [&](const char* method, const std::string& target, const std::string& body = "") {
    return HandleRequest(sim, ApiRequest{method, target, body, "application/json"}, "sim");
  };
  for (const char* name : {"c", "a", "e", "b", "d"}) {
    ASSERT_EQ(
        call("POST", sandboxes, std::string(R"({"metadata":{"name":")") + name + R"("},"spec":{}})")
            .status,
        201);
  }
  std::vector<std::string> names;
  std::string token, rv;
  int pages = 0;
  do {
    const ApiReply r =
        call("GET", sandboxes + "?limit=2" + (token.empty() ? "" : "&continue=" + token));
    ASSERT_EQ(r.status, 200) << r.body;
    const json::value page = json::parse(r.body);
    ++pages;
    const json::object& meta = page.at("metadata").as_object();
    if (rv.empty()) rv = meta.at("resourceVersion").as_string();
    EXPECT_EQ(meta.at("resourceVersion").as_string(), rv);
    for (const auto& item : page.at("items").as_array())
      names.emplace_back(item.at("metadata").at("name").as_string());
    token = meta.contains("continue") ? std::string(meta.at("continue").as_string()) : "";
  } while (!token.empty() && pages < 10);
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d", "e"}));

  const ApiReply first = call("GET", sandboxes + "?limit=2");
  const std::string old_token(json::parse(first.body).at("metadata").at("continue").as_string());
  ASSERT_EQ(call("POST", sandboxes, R"({"metadata":{"name":"f"},"spec":{}})").status, 201);
  sim.ExpireHistory();
  const ApiReply expired = call("GET", sandboxes + "?limit=2&continue=" + old_token);
  EXPECT_EQ(expired.status, 410) << expired.body;
  EXPECT_EQ(json::parse(expired.body).at("reason"), "Expired");
  EXPECT_EQ(call("GET", sandboxes + "?limit=2&continue=zz").status, 400);
}

TEST(Scenario, IncidentFileBuildsTheCluster) {
  auto sc = ParseScenarioFile(std::string(FK_SOURCE_DIR) + "/tests/scenarios/incident-3525.yaml");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  Simulator sim(sc->options);
  ASSERT_TRUE(ApplyScenario(sim, *sc).ok());
  const ResourceKind* sandboxes = FindKind("agents.x-k8s.io", "sandboxes");
  EXPECT_EQ(sim.store().List(*sandboxes, "openshell-agents", Selector(), Selector()).items.size(),
            10u);
  EXPECT_EQ(sim.store().List(*sandboxes, "team-healthy", Selector(), Selector()).items.size(), 2u);
  Outcome active = sim.store().Get(*sandboxes, "openshell-agents", "active-1");
  Outcome fence = sim.store().Get(*FindKind("networking.k8s.io", "networkpolicies"),
                                  "openshell-agents", domain::kWorkloadPolicyName);
  const auto& ann = active.object.at("metadata").at("annotations");
  EXPECT_EQ(ann.at(kube::kFenceUidAnnotation), fence.object.at("metadata").at("uid"));
  EXPECT_EQ(ann.at(kube::kFenceGenerationAnnotation), "1");
  Outcome pod = sim.store().Get(*FindKind("", "pods"), "openshell-agents", "active-1");
  EXPECT_EQ(ann.at(kube::kWorkloadUidAnnotation), pod.object.at("metadata").at("uid"));
}

// A benchmark fleet: `generate` names N running sandboxes, `podBytes` grows
// every pod to about that much JSON.
TEST(Scenario, GeneratesAFleetWithPodsOfTheRequestedSize) {
  auto sc = ParseScenario(
      "namespaces: [{name: n, podBytes: 9500, generate: {count: 12, prefix: x-}, "
      "sandboxes: [{name: named}]}]",
      "test");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  Simulator sim(sc->options);
  ASSERT_TRUE(ApplyScenario(sim, *sc).ok());
  const auto* sandboxes = FindKind("agents.x-k8s.io", "sandboxes");
  EXPECT_EQ(sim.store().List(*sandboxes, "n", Selector(), Selector()).items.size(), 13u);
  EXPECT_TRUE(sim.store().Get(*sandboxes, "n", "x-00011").ok());
  for (const char* pod : {"x-00000", "os-supervisor-x-00000"}) {
    Outcome p = sim.store().Get(*FindKind("", "pods"), "n", pod);
    ASSERT_TRUE(p.ok()) << pod;
    const size_t bytes = json::serialize(p.object).size();
    EXPECT_GE(bytes, 9500u) << pod;
    EXPECT_LT(bytes, 10500u) << pod;
  }
  EXPECT_FALSE(ParseScenario("namespaces: [{name: n, generate: {count: -1}}]", "t").ok());
}

TEST(Scenario, FenceGenerationAndErrors) {
  auto sc = ParseScenario(R"(
namespaces:
  - name: n
    fence: {generation: 4}
    sandboxes: [{name: s, mode: Suspended, admittedFenceGeneration: 3}]
faults: [{verb: list, status: 429, retryAfterSeconds: 2}]
)",
                          "inline");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  Simulator sim(sc->options);
  ASSERT_TRUE(ApplyScenario(sim, *sc).ok());
  Outcome fence = sim.store().Get(*FindKind("networking.k8s.io", "networkpolicies"), "n",
                                  domain::kWorkloadPolicyName);
  EXPECT_EQ(fence.object.at("metadata").at("generation"), 4);
  EXPECT_EQ(fence.object.at("spec").at("ingress").at(0).at("ports").at(0).at("port"),
            5500);  // intact again
  EXPECT_EQ(sim.TakeFault("list", "pods")->retry_after_seconds, 2);

  auto bad =
      ParseScenario("namespaces: [{name: n, sandboxes: [{name: s, mode: Sleeping}]}]", "bad.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.yaml"), std::string::npos);
  EXPECT_NE(bad.status().message().find("mode must be Running or Suspended"), std::string::npos);
  EXPECT_FALSE(ParseScenario("{unclosed", "x").ok());
  EXPECT_FALSE(ParseScenario("surprise: 1", "x").ok());
}

TEST(YamlToJson, QuotedScalarsStayStrings) {
  auto v = YamlToJson("a: \"1\"\nb: 1\nc: true\nd: 'x'\ne: ~\nf: 1.5\n");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, J(R"({"a":"1","b":1,"c":true,"d":"x","e":null,"f":1.5})"));
}

}  // namespace
}  // namespace fk::sim

namespace fk::sim {
namespace {

// README's simulator section runs `kubectl create -f deploy/examples/sandbox.yaml`
// against the incident scenario: the file exists, reads as YAML, and the
// simulator accepts it as kubectl sends it (JSON, POST to its namespace).
TEST(Scenario, TheReadmeExampleSandboxIsAccepted) {
  auto sc = ParseScenarioFile("incident-3525");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  Simulator sim(sc->options);
  ASSERT_TRUE(ApplyScenario(sim, *sc).ok());
  const std::string path = std::string(FK_SOURCE_DIR) + "/deploy/examples/sandbox.yaml";
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " is missing";
  const std::string text = testing::ReadBytes(path);
  auto object = YamlToJson(text);
  ASSERT_TRUE(object.ok()) << object.status().ToString();
  const json::value& meta = object->at("metadata");
  const std::string ns(meta.at("namespace").as_string());
  const std::string name(meta.at("name").as_string());
  const ApiReply created = HandleRequest(
      sim,
      ApiRequest{"POST", "/apis/agents.x-k8s.io/v1beta1/namespaces/" + ns + "/sandboxes",
                 json::serialize(*object), "application/json"},
      "sim");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_TRUE(sim.store().Get(*FindKind("", "pods"), ns, name).ok())
      << "a Running sandbox gets its workload pod";
}

TEST(Scenario, BuiltInScenariosLoadByName) {
  auto sc = ParseScenarioFile("incident-3525");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  ASSERT_EQ(sc->namespaces.size(), 2u);
  EXPECT_EQ(sc->namespaces[0].sandboxes.size(), 10u);
  auto missing = ParseScenarioFile("no-such-scenario");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("built-in scenarios: incident-3525"),
            std::string::npos);
}

}  // namespace
}  // namespace fk::sim
