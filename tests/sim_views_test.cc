// What operators' habits need from the simulator, called in-process: Events
// served as core/v1 and events.k8s.io/v1 from one store with the real
// server's conversion and field selectors (kubectl describe / kubectl
// events), a meta.k8s.io Table for sandboxes (kubectl get), and the --fault
// flag as the README writes it.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "sim/event_views.h"
#include "sim/fault_spec.h"
#include "sim/handler.h"
#include "sim/simulator.h"
#include "sim/table.h"

namespace fk::sim {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

constexpr const char* kCoreEvents = "/api/v1/namespaces/ns/events";
constexpr const char* kV1Events = "/apis/events.k8s.io/v1/namespaces/ns/events";
constexpr const char* kTableAccept =
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s."
    "io,application/json";

struct Client {
  Simulator& sim;
  ApiReply Call(const std::string& method, const std::string& target, const std::string& body = "",
                const std::string& accept = "application/json") {
    return HandleRequest(sim, ApiRequest{method, target, body, "application/json", accept}, "sim");
  }
  json::value Json(const std::string& method, const std::string& target,
                   const std::string& body = "", int want = 200) {
    ApiReply r = Call(method, target, body);
    EXPECT_EQ(r.status, want) << method << " " << target << ": " << r.body;
    return json::parse(r.body);
  }
};

// What fencekeeper's recorder posts (events.k8s.io/v1), regarding sandbox uid-a.
const char* kRecorded = R"({"apiVersion":"events.k8s.io/v1","kind":"Event",
  "metadata":{"name":"a.1","namespace":"ns"},
  "eventTime":"2026-12-01T10:00:00.000000Z","reportingController":"fencekeeper",
  "reportingInstance":"fk-0","action":"Suspend","reason":"FenceStale","type":"Warning",
  "note":"fail-closed: suspended","series":{"count":3,"lastObservedTime":"2026-12-01T10:05:00.000000Z"},
  "regarding":{"apiVersion":"agents.x-k8s.io/v1beta1","kind":"Sandbox","namespace":"ns","name":"a","uid":"uid-a"}})";

TEST(CoreEvents, AnEventPostedAsEventsV1ReadsAsCoreV1FieldByField) {
  Simulator sim;
  Client c{sim};
  c.Json("POST", kV1Events, kRecorded, 201);
  const json::value core = c.Json("GET", std::string(kCoreEvents) + "/a.1");
  EXPECT_EQ(core.at("apiVersion"), "v1");
  EXPECT_EQ(core.at("kind"), "Event");
  EXPECT_EQ(core.at("message"), "fail-closed: suspended");
  EXPECT_EQ(core.at("involvedObject").at("uid"), "uid-a");
  EXPECT_EQ(core.at("involvedObject").at("kind"), "Sandbox");
  EXPECT_EQ(core.at("reportingComponent"), "fencekeeper");
  EXPECT_EQ(core.at("reportingInstance"), "fk-0");
  EXPECT_EQ(core.at("eventTime"), "2026-12-01T10:00:00.000000Z");
  EXPECT_EQ(core.at("series").at("count"), 3);
  EXPECT_EQ(core.at("reason"), "FenceStale");
  EXPECT_EQ(core.at("action"), "Suspend");
  EXPECT_EQ(core.at("type"), "Warning");
  EXPECT_TRUE(core.at("firstTimestamp").is_null());  // deprecatedFirstTimestamp was unset
  for (const char* v1_only : {"note", "regarding", "reportingController", "deprecatedCount"})
    EXPECT_FALSE(core.as_object().contains(v1_only)) << v1_only;
  // The same object, not a copy: one resourceVersion, one uid.
  const json::value v1 = c.Json("GET", std::string(kV1Events) + "/a.1");
  EXPECT_EQ(v1.at("metadata").at("uid"), core.at("metadata").at("uid"));
  EXPECT_EQ(v1.at("metadata").at("resourceVersion"), core.at("metadata").at("resourceVersion"));
  EXPECT_EQ(v1.at("note"), "fail-closed: suspended");
}

TEST(CoreEvents, AnEventPostedAsCoreV1ReadsAsEventsV1) {
  Simulator sim;
  Client c{sim};
  c.Json("POST", kCoreEvents, R"({"apiVersion":"v1","kind":"Event",
    "metadata":{"name":"legacy.1","namespace":"ns"},"message":"Started","reason":"Started",
    "type":"Normal","count":4,"firstTimestamp":"2026-12-01T09:00:00Z",
    "lastTimestamp":"2026-12-01T09:30:00Z","source":{"component":"kubelet","host":"node-1"},
    "involvedObject":{"kind":"Pod","namespace":"ns","name":"p","uid":"uid-p"}})",
         201);
  const json::value v1 = c.Json("GET", std::string(kV1Events) + "/legacy.1");
  EXPECT_EQ(v1.at("apiVersion"), "events.k8s.io/v1");
  EXPECT_EQ(v1.at("note"), "Started");
  EXPECT_EQ(v1.at("regarding").at("name"), "p");
  EXPECT_EQ(v1.at("deprecatedCount"), 4);
  EXPECT_EQ(v1.at("deprecatedFirstTimestamp"), "2026-12-01T09:00:00Z");
  EXPECT_EQ(v1.at("deprecatedLastTimestamp"), "2026-12-01T09:30:00Z");
  EXPECT_EQ(v1.at("deprecatedSource").at("component"), "kubelet");
  // Listed through both APIs, once each.
  EXPECT_EQ(c.Json("GET", kV1Events).at("items").as_array().size(), 1u);
  EXPECT_EQ(c.Json("GET", kCoreEvents).at("items").as_array().size(), 1u);
  EXPECT_EQ(c.Json("GET", "/api/v1/events").at("kind"), "EventList");
}

// kubectl describe sandbox a lists core/v1 events with this selector.
TEST(CoreEvents, InvolvedObjectFieldSelectorsAsKubectlDescribeSendsThem) {
  Simulator sim;
  Client c{sim};
  c.Json("POST", kV1Events, kRecorded, 201);
  std::string other = kRecorded;
  other.replace(other.find("\"a.1\""), 5, "\"b.1\"");
  other.replace(other.find("uid-a"), 5, "uid-b");
  c.Json("POST", kV1Events, other, 201);
  auto names = [&](const std::string& selector) {
    const json::value list = c.Json("GET", std::string(kCoreEvents) + "?fieldSelector=" + selector);
    std::vector<std::string> out;
    for (const auto& e : list.at("items").as_array())
      out.emplace_back(e.at("metadata").at("name").as_string());
    return out;
  };
  EXPECT_EQ(names("involvedObject.name%3Da%2CinvolvedObject.namespace%3Dns%2CinvolvedObject.kind%"
                  "3DSandbox%2CinvolvedObject.uid%3Duid-b"),
            std::vector<std::string>{"b.1"});
  EXPECT_EQ(names("involvedObject.uid%3Duid-a"), std::vector<std::string>{"a.1"});
  EXPECT_EQ(names("involvedObject.kind%3DPod"), std::vector<std::string>{});
  EXPECT_EQ(names("reportingComponent%3Dfencekeeper%2Ctype%3DWarning").size(), 2u);
  EXPECT_EQ(names("involvedObject.uid%21%3Duid-a"), std::vector<std::string>{"b.1"});
  // An unknown field is refused, as the API server does, and not read as "match all".
  EXPECT_EQ(c.Call("GET", std::string(kCoreEvents) + "?fieldSelector=spec.x%3Dy").status, 400);
  EXPECT_EQ(
      c.Call("GET", "/apis/agents.x-k8s.io/v1beta1/sandboxes?fieldSelector=reason%3Dx").status,
      400);
}

TEST(CoreEvents, DiscoveryListsEventsInTheCoreGroup) {
  Simulator sim;
  Client c{sim};
  bool found = false;
  const json::value discovery = c.Json("GET", "/api/v1");
  for (const auto& r : discovery.at("resources").as_array())
    found |= r.at("name") == "events" && r.at("kind") == "Event";
  EXPECT_TRUE(found);
}

TEST(SandboxTable, KubectlGetGetsNameModeFenceAndAge) {
  ManualTimeSource clock;
  Simulator sim(SimOptions{}, clock);
  Client c{sim};
  const std::string sandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";
  c.Json("POST", sandboxes,
         R"({"metadata":{"name":"a","annotations":{
         "openshell.ai/sandbox-runtime-network-policy-generation":"3"}},
         "spec":{"operatingMode":"Suspended"}})",
         201);
  clock.Advance(5min);
  const ApiReply reply = c.Call("GET", sandboxes, "", kTableAccept);
  ASSERT_EQ(reply.status, 200) << reply.body;
  const json::value table = json::parse(reply.body);
  EXPECT_EQ(table.at("kind"), "Table");
  EXPECT_EQ(table.at("apiVersion"), "meta.k8s.io/v1");
  std::vector<std::string> headers;
  for (const auto& col : table.at("columnDefinitions").as_array())
    headers.emplace_back(col.at("name").as_string());
  EXPECT_EQ(headers, (std::vector<std::string>{"Name", "Mode", "Fence", "Age"}));
  ASSERT_EQ(table.at("rows").as_array().size(), 1u);
  const json::value& row = table.at("rows").at(0);
  EXPECT_EQ(row.at("cells"), (json::array{"a", "Suspended", "3", "5m"}));
  EXPECT_EQ(row.at("object").at("kind"), "PartialObjectMetadata");
  EXPECT_EQ(row.at("object").at("metadata").at("namespace"), "ns");
  // GET by name answers a one-row Table; v1alpha1's replicas read as the mode.
  const json::value one = json::parse(c.Call("GET", sandboxes + "/a", "", kTableAccept).body);
  EXPECT_EQ(one.at("rows").at(0).at("cells").at(0), "a");
  const json::value alpha = json::parse(
      c.Call("GET", "/apis/agents.x-k8s.io/v1alpha1/namespaces/ns/sandboxes", "", kTableAccept)
          .body);
  EXPECT_EQ(alpha.at("rows").at(0).at("cells").at(1), "Suspended");
  // Without the Table media type, and for kinds without columns: plain JSON.
  EXPECT_EQ(c.Json("GET", sandboxes).at("kind"), "SandboxList");
  EXPECT_EQ(
      json::parse(c.Call("GET", "/api/v1/namespaces/ns/pods", "", kTableAccept).body).at("kind"),
      "PodList");
}

// kubectl get events: the server's printer columns for core/v1 Events.
TEST(EventTable, KubectlGetEventsGetsLastSeenTypeReasonObjectMessage) {
  ManualTimeSource clock(std::chrono::sys_days{std::chrono::December / 1 / 2026} + 10h + 7min);
  Simulator sim(SimOptions{}, clock);
  Client c{sim};
  c.Json("POST", kV1Events, kRecorded, 201);  // series.lastObservedTime 10:05
  const json::value table = json::parse(c.Call("GET", kCoreEvents, "", kTableAccept).body);
  ASSERT_EQ(table.at("kind"), "Table");
  std::vector<std::string> headers;
  for (const auto& col : table.at("columnDefinitions").as_array())
    if (col.at("priority") == 0) headers.emplace_back(col.at("name").as_string());
  EXPECT_EQ(headers,
            (std::vector<std::string>{"Last Seen", "Type", "Reason", "Object", "Message"}));
  EXPECT_EQ(
      table.at("rows").at(0).at("cells"),
      (json::array{"2m", "Warning", "FenceStale", "sandbox/a", "fail-closed: suspended", "a.1"}));
}

TEST(SandboxTable, AgesPrintAsKubectlDoes) {
  EXPECT_EQ(HumanAge(45s), "45s");
  EXPECT_EQ(HumanAge(119s), "119s");
  EXPECT_EQ(HumanAge(200s), "3m20s");
  EXPECT_EQ(HumanAge(5min), "5m");
  EXPECT_EQ(HumanAge(75min), "75m");
  EXPECT_EQ(HumanAge(5h + 3min), "5h3m");
  EXPECT_EQ(HumanAge(20h), "20h");
  EXPECT_EQ(HumanAge(76h), "3d4h");
  EXPECT_EQ(HumanAge(40 * 24h), "40d");
  EXPECT_EQ(HumanAge(-3s), "0s");
}

TEST(FaultSpec, TheReadmeFormsParse) {
  auto twice = ParseFaultSpec("patch:sandboxes:503::2");
  ASSERT_TRUE(twice);
  EXPECT_EQ(twice->verb, "patch");
  EXPECT_EQ(twice->resource, "sandboxes");
  EXPECT_EQ(twice->status, 503);
  EXPECT_EQ(twice->retry_after_seconds, 0);
  EXPECT_EQ(twice->count, 2);
  auto lists = ParseFaultSpec("list:*:429:1:1");
  ASSERT_TRUE(lists);
  EXPECT_EQ(lists->retry_after_seconds, 1);
  EXPECT_EQ(lists->count, 1);
  auto always = ParseFaultSpec("*:*:500");
  ASSERT_TRUE(always);
  EXPECT_EQ(always->count, -1);
  for (const char* bad : {"patch:sandboxes", "patch:sandboxes:abc", "patsh:sandboxes:503",
                          "patch::503", "patch:sandboxes:42", "patch:sandboxes:503:x",
                          "patch:sandboxes:503:1:0", "patch:sandboxes:503:1:2:3"})
    EXPECT_FALSE(ParseFaultSpec(bad)) << bad;
}

}  // namespace
}  // namespace fk::sim
