// Names that go into URL paths (issue 9, "safe output"): DNS-1123 checks as
// apimachinery's, percent-encoding per RFC 3986, hostile names refused
// before any request, including one read back from the journal; and the
// label selector language shared by `run --selector` and the simulator.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "domain/dns_names.h"
#include "domain/label_selector.h"
#include "fake_transport.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/json_fields.h"
#include "map_cache.h"
#include "reconciler/sandbox_reconciler.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "test_support.h"

namespace fk {
namespace {

const std::vector<std::string> kHostile = {
    "../x",  "..",          ".",     "a/b",       "%2F",
    "a%2Fb", "?watch",      "a?b=c", "a#frag",    "A",
    "Upper", "a_b",         "a b",   "-a",        "a-",
    "",      "caf\xC3\xA9", "a\nb",  "a\x1b[31m", "a\\b",
    "a;b",   "a..b",        ".a",    "a.",        std::string(254, 'a')};

TEST(DnsNames, LabelsAndSubdomainsAsApimachineryValidatesThem) {
  for (const char* ok : {"a", "ns-a", "0", "a0-b1", "openshell-agents"}) {
    EXPECT_TRUE(domain::IsDns1123Label(ok)) << ok;
    EXPECT_TRUE(domain::IsDns1123Subdomain(ok)) << ok;
  }
  EXPECT_TRUE(domain::IsDns1123Label(std::string(63, 'a')));
  EXPECT_FALSE(domain::IsDns1123Label(std::string(64, 'a')));
  EXPECT_FALSE(domain::IsDns1123Label("a.b"));  // a namespace has no dots
  EXPECT_TRUE(domain::IsDns1123Subdomain("a.b.c"));
  EXPECT_TRUE(domain::IsDns1123Subdomain(std::string(253, 'a')));
  EXPECT_TRUE(domain::IsDns1123Subdomain(std::string(100, 'a') + "." + std::string(100, 'b')));
  for (const std::string& bad : kHostile) {
    EXPECT_FALSE(domain::IsDns1123Subdomain(bad)) << bad;
    EXPECT_FALSE(domain::IsDns1123Label(bad)) << bad;
  }
}

TEST(DnsNames, LabelKeysAndValues) {
  for (const char* ok : {"app", "openshell.ai/managed-by", "a.b/C_d-e.f", "x/y"})
    EXPECT_TRUE(domain::IsQualifiedName(ok)) << ok;
  for (const char* bad : {"", "/a", "a/", "a/b/c", "Bad_Prefix/x", "-a", "a b", "a=b"})
    EXPECT_FALSE(domain::IsQualifiedName(bad)) << bad;
  EXPECT_TRUE(domain::IsLabelValue(""));
  EXPECT_TRUE(domain::IsLabelValue("Running_1.x"));
  EXPECT_FALSE(domain::IsLabelValue(std::string(64, 'a')));
  EXPECT_FALSE(domain::IsLabelValue("a/b"));
}

TEST(PathSegment, EncodesEverythingButUnreserved) {
  EXPECT_EQ(kube::PathSegment("abc-1.2_~"), "abc-1.2_~");
  EXPECT_EQ(kube::PathSegment("a/b"), "a%2Fb");
  EXPECT_EQ(kube::PathSegment("%2F"), "%252F");
  EXPECT_EQ(kube::PathSegment("?watch"), "%3Fwatch");
  EXPECT_EQ(kube::PathSegment("a#b c"), "a%23b%20c");
  EXPECT_EQ(kube::PathSegment("caf\xC3\xA9"), "caf%C3%A9");
  EXPECT_EQ(kube::ResourcePath("", "v1", "pods", "a/b", "../x"),
            "/api/v1/namespaces/a%2Fb/pods/..%2Fx");
}

TEST(ObjectPath, RefusesEveryNameTheApiServerCouldNotHaveIssued) {
  auto ok = kube::ObjectPath(kube::SandboxResource(domain::ApiVersion::kV1beta1), "ns-a", "sb.1");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, "/apis/agents.x-k8s.io/v1beta1/namespaces/ns-a/sandboxes/sb.1");
  for (const std::string& bad : kHostile) {
    if (bad.empty()) continue;  // "" means a collection
    auto as_name = kube::ObjectPath(kube::PodResource(), "ns", bad);
    EXPECT_FALSE(as_name.ok()) << bad;
    auto as_ns = kube::ObjectPath(kube::PodResource(), bad, "x");
    ASSERT_FALSE(as_ns.ok()) << bad;
    EXPECT_NE(as_ns.status().message().find("namespace"), std::string::npos);
  }
}

TEST(LabelSelector, ParsesAndMatchesAsKubernetes) {
  auto s = domain::ParseLabelSelector("a=1, b!=2, c in (x, y), d notin (z), e, !f, g==3, n>5");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_EQ(s->requirements.size(), 8u);
  std::map<std::string, std::string> labels{{"a", "1"}, {"b", "1"}, {"c", "y"}, {"d", "q"},
                                            {"e", ""},  {"g", "3"}, {"n", "6"}};
  auto lookup = [&](const std::string& k) -> std::optional<std::string> {
    auto it = labels.find(k);
    return it == labels.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  EXPECT_TRUE(s->Matches(lookup));
  labels["f"] = "present";
  EXPECT_FALSE(s->Matches(lookup));
  labels.erase("f");
  labels["n"] = "5";
  EXPECT_FALSE(s->Matches(lookup));
  EXPECT_TRUE(domain::ParseLabelSelector("a in(x),b notin(y)").ok());
  EXPECT_TRUE(domain::ParseLabelSelector("a=").ok());  // empty value
  for (const char* bad : {",", "a,", "a=b=c", "a in x", "a in (x", "!a=b", "a b", "=b", "a<b",
                          "a in ()", "(a)", "a!", "key with space=v"}) {
    EXPECT_FALSE(domain::ParseLabelSelector(bad).ok()) << bad;
  }
}

// A pending intent whose name was damaged in the journal is settled without
// a request; nothing with that name reaches the API server.
TEST(HostileNames, APendingIntentWithABadNameIsSettledWithoutARequest) {
  ManualTimeSource time;
  fk::testing::TempDir dir;
  journal::OpenOptions jo;
  jo.clock = &time;
  auto journal = journal::Journal::Open(dir.File("journal.db"), jo);
  ASSERT_TRUE(journal.ok());
  for (const std::string name : {"../../api/v1/secrets", "a/b", "%2F"}) {
    domain::Snapshot snap = fk::testing::StaleSnapshot();
    snap.sandbox.name = name;
    snap.sandbox.uid = "uid-" + name;
    domain::Evaluation eval{snap, domain::decide(snap), "7"};
    ASSERT_EQ(eval.decision.action, domain::Action::kPatchSuspend);
    auto recorded = (*journal)->Record(eval);
    ASSERT_TRUE(recorded.ok() && recorded->intent_seq);
  }
  auto transport = std::make_unique<kube::FakeTransport>([](const kube::HttpRequest&) {
    return Result<kube::HttpResponse>(kube::HttpResponse{404, "", "", std::nullopt});
  });
  kube::FakeTransport* wire = transport.get();
  kube::ClientOptions co;
  co.time = &time;
  co.qps = 0;
  auto client = kube::ApiClient::CreateWithTransport({}, co, std::move(transport));
  fk::testing::MapCache cache;
  reconciler::SandboxReconciler r(cache, *client, **journal, time, nullptr, nullptr, {});
  for (const std::string name : {"../../api/v1/secrets", "a/b", "%2F"})
    EXPECT_EQ(r.Reconcile({"agents", name}).next, reconciler::ReconcileResult::Next::kDone) << name;
  EXPECT_TRUE(wire->requests().empty()) << wire->requests().front().target;
  EXPECT_TRUE((*journal)->state().pending_intents.empty());
}

// The workload pod is named by an annotation anyone who can edit the
// Sandbox controls: a path in it never reaches a URL. The pod it names
// cannot exist, so the sandbox fails closed as for a missing pod.
TEST(HostileNames, APodNameAnnotationIsNeverPutIntoAPath) {
  ManualTimeSource time;
  sim::SimOptions so;
  so.emulate_agent_sandbox = false;
  sim::Simulator sim(so, time);
  auto sc = sim::ParseScenario("namespaces: [{name: ns, sandboxes: [{name: a, mode: Running}]}]\n",
                               "test");
  ASSERT_TRUE(sc.ok() && sim::ApplyScenario(sim, *sc).ok());
  const std::string sandboxes = fk::testing::kNsSandboxesPath;
  sim::HandleRequest(sim,
                     {"PATCH", sandboxes + "/a",
                      R"({"metadata":{"annotations":{"agents.x-k8s.io/pod-name":
                          "../../../api/v1/namespaces/kube-system/secrets/x"}}})",
                      "application/merge-patch+json"},
                     "sim");
  fk::testing::MapCache cache;
  cache.FillFrom("ns", [&](const std::string& path) { return fk::testing::SimGet(sim, path); });
  fk::testing::TempDir dir;
  journal::OpenOptions jo;
  jo.clock = &time;
  auto journal = journal::Journal::Open(dir.File("journal.db"), jo);
  ASSERT_TRUE(journal.ok());
  auto transport = fk::testing::InProcessTransport(sim);
  kube::FakeTransport* wire = transport.get();
  kube::ClientOptions co;
  co.time = &time;
  co.qps = 0;
  auto client = kube::ApiClient::CreateWithTransport({}, co, std::move(transport));
  reconciler::SandboxReconciler r(cache, *client, **journal, time, nullptr, nullptr, {});
  EXPECT_EQ(r.Reconcile({"ns", "a"}).next, reconciler::ReconcileResult::Next::kDone);
  int patches = 0;
  for (const auto& req : wire->requests()) {
    EXPECT_EQ(req.target.find("secrets"), std::string::npos) << req.method << " " << req.target;
    patches += req.method == "PATCH" && req.target == sandboxes + "/a";
  }
  EXPECT_EQ(patches, 1);  // fails closed: no pod by that name can exist
}

}  // namespace
}  // namespace fk
