// The API server's policyTypes defaulting of NetworkPolicies in the
// simulator (sim/defaults.h), through its request handling called in-process
// (sim/handler.h) as a client's requests reach it: on create, update and
// every kind of patch it takes; what get, list and a watch then see; and the
// generation rule applied after the defaulting.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "sim/handler.h"
#include "sim/simulator.h"
#include "sim/store.h"

namespace fk::sim {
namespace {
namespace json = boost::json;

constexpr const char* kPolicies = "/apis/networking.k8s.io/v1/namespaces/ns/networkpolicies";

class SimPolicyDefaults : public ::testing::Test {
 protected:
  SimPolicyDefaults() {
    sim_.store().Watch(*FindKind("networking.k8s.io", "networkpolicies"), "", std::nullopt,
                       [this](const StoredEvent& e) { events_.push_back(e); });
  }

  ApiReply Call(const char* method, const std::string& target, const std::string& body = "",
                const std::string& type = "application/json") {
    return HandleRequest(sim_, ApiRequest{method, target, body, type}, "sim");
  }
  // Creates policy `name` with `spec` (JSON text); returns what the server answered.
  json::value Create(const std::string& name, const std::string& spec) {
    const ApiReply r = Call("POST", kPolicies,
                            R"({"apiVersion":"networking.k8s.io/v1","kind":"NetworkPolicy",
                                "metadata":{"name":")" +
                                name + R"("}, "spec":)" + spec + "}");
    EXPECT_EQ(r.status, 201) << r.body;
    return json::parse(r.body);
  }
  json::value Get(const std::string& name) {
    const ApiReply r = Call("GET", std::string(kPolicies) + "/" + name);
    EXPECT_EQ(r.status, 200) << r.body;
    return json::parse(r.body);
  }
  json::value Patch(const std::string& name, const std::string& type, const std::string& body,
                    const std::string& query = "") {
    const ApiReply r = Call("PATCH", std::string(kPolicies) + "/" + name + query, body, type);
    EXPECT_EQ(r.status, 200) << type << ": " << r.body;
    return json::parse(r.body);
  }
  static json::value Types(const json::value& policy) {
    const json::value* t = policy.at("spec").as_object().if_contains("policyTypes");
    return t ? *t : json::value("absent");
  }
  static int64_t Generation(const json::value& policy) {
    return policy.at("metadata").at("generation").as_int64();
  }

  Simulator sim_;
  std::vector<StoredEvent> events_;
};

const json::array kIngress{"Ingress"};
const json::array kBoth{"Ingress", "Egress"};

TEST_F(SimPolicyDefaults, CreateFillsInPolicyTypesFromTheEgressRules) {
  EXPECT_EQ(Types(Create("none", R"({"podSelector":{}})")), kIngress);
  EXPECT_EQ(Types(Create("egress-rule", R"({"podSelector":{},"egress":[{}]})")), kBoth);
  EXPECT_EQ(Types(Create("empty-lists", R"({"podSelector":{},"policyTypes":[],"egress":[]})")),
            kIngress);
  EXPECT_EQ(Types(Create("null-types", R"({"podSelector":{},"policyTypes":null,"egress":[{}]})")),
            kBoth);
  // Given non-empty, it is kept as it is, whatever the rules say.
  EXPECT_EQ(Types(Create("given", R"({"podSelector":{},"policyTypes":["Egress"],"ingress":[{}]})")),
            json::array{"Egress"});
  // No spec at all is an empty spec to the API server.
  const ApiReply bare = Call("POST", kPolicies, R"({"metadata":{"name":"bare"}})");
  ASSERT_EQ(bare.status, 201) << bare.body;
  EXPECT_EQ(Types(json::parse(bare.body)), kIngress);

  // Get, list and the watch all see the stored, defaulted object.
  EXPECT_EQ(Types(Get("egress-rule")), kBoth);
  const ApiReply list = Call("GET", kPolicies);
  ASSERT_EQ(list.status, 200) << list.body;
  const json::value items = json::parse(list.body).at("items");
  ASSERT_EQ(items.as_array().size(), 6u);
  for (const json::value& item : items.as_array())
    EXPECT_TRUE(Types(item).is_array()) << json::serialize(item);
  ASSERT_EQ(events_.size(), 6u);
  EXPECT_EQ(events_[1].type, "ADDED");
  EXPECT_EQ(Types(events_[1].object), kBoth);
  EXPECT_EQ(Types(events_[5].object), kIngress);
}

// Each write that leaves policyTypes absent or empty gets it filled in from
// the egress rules it leaves: PUT, merge, JSON, strategic merge and apply patches.
TEST_F(SimPolicyDefaults, EveryKindOfWriteIsDefaulted) {
  const std::string drop_types_and_egress = R"({"spec":{"policyTypes":null,"egress":null}})";
  const std::vector<std::tuple<std::string, std::string, std::string>> patches = {
      {"application/merge-patch+json", drop_types_and_egress, ""},
      {"application/strategic-merge-patch+json", drop_types_and_egress, ""},
      {"application/apply-patch+yaml", drop_types_and_egress, "?fieldManager=test"},
      {"application/json-patch+json",
       R"([{"op":"remove","path":"/spec/policyTypes"},{"op":"remove","path":"/spec/egress"}])", ""},
  };
  int n = 0;
  for (const auto& [type, body, query] : patches) {
    const std::string name = "p" + std::to_string(n++);
    const json::value created =
        Create(name, R"({"podSelector":{},"policyTypes":["Ingress","Egress"],"egress":[{}]})");
    const json::value patched = Patch(name, type, body, query);
    EXPECT_EQ(Types(patched), kIngress) << type;
    EXPECT_FALSE(patched.at("spec").as_object().contains("egress")) << type;
    EXPECT_EQ(Generation(patched), 2) << type;
    EXPECT_EQ(Types(events_.back().object), kIngress) << type;
  }

  // PUT: a manifest without policyTypes, as `kubectl replace` sends one.
  json::value put = Create("put", R"({"podSelector":{},"policyTypes":["Egress"]})");
  put.at("spec").as_object().erase("policyTypes");
  put.at("spec").as_object()["egress"] = json::array{json::object{}};
  const ApiReply replaced =
      Call("PUT", std::string(kPolicies) + "/put", json::serialize(put), "application/json");
  ASSERT_EQ(replaced.status, 200) << replaced.body;
  EXPECT_EQ(Types(json::parse(replaced.body)), kBoth);
  EXPECT_EQ(Types(Get("put")), kBoth);
  EXPECT_EQ(Types(events_.back().object), kBoth);
}

// The generation is compared after the defaulting: dropping policyTypes that
// the server fills in again to the same list changes nothing — no generation,
// no resourceVersion, no event.
TEST_F(SimPolicyDefaults, AWriteThatTheDefaultingUndoesIsANoOp) {
  const json::value created = Create("dns", R"({"podSelector":{},"egress":[{}]})");
  ASSERT_EQ(Types(created), kBoth);
  const size_t events = events_.size();
  for (const auto& [type, body] : std::vector<std::pair<std::string, std::string>>{
           {"application/merge-patch+json", R"({"spec":{"policyTypes":null}})"},
           {"application/merge-patch+json", R"({"spec":{"policyTypes":[]}})"},
           {"application/json-patch+json", R"([{"op":"remove","path":"/spec/policyTypes"}])"}}) {
    const json::value after = Patch("dns", type, body);
    EXPECT_EQ(Generation(after), 1) << body;
    EXPECT_EQ(after.at("metadata").at("resourceVersion"),
              created.at("metadata").at("resourceVersion"))
        << body;
  }
  EXPECT_EQ(events_.size(), events);
}

// Only an absent or empty list is defaulted: egress rules added later to a
// policy the server made Ingress-only leave it Ingress-only, as on a real
// cluster (the rules then isolate nothing), while its generation moves.
TEST_F(SimPolicyDefaults, EgressRulesAddedLaterKeepTheStoredPolicyTypes) {
  ASSERT_EQ(Types(Create("late", R"({"podSelector":{}})")), kIngress);
  const json::value after = Patch("late", "application/merge-patch+json",
                                  R"({"spec":{"egress":[{"ports":[{"port":53}]}]}})");
  EXPECT_EQ(Types(after), kIngress);
  EXPECT_EQ(Generation(after), 2);
}

}  // namespace
}  // namespace fk::sim
