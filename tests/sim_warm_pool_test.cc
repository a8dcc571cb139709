// Scenario sandboxes as OpenShell's driver shapes them now
// (shared/reference/openshell-upstream-now.md, A and B): warm-pool pairs,
// claimed and spare, named by their pair id; workload pods labelled from the
// sandbox's pod template; OpenShell's resume of a pair; more NetworkPolicies
// per namespace; the policy edits the demo makes (sim::AddNetworkPolicy,
// sim::DeleteNetworkPolicy); and the built-in warm-pool-and-bypass scenario.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>
#include <string>

#include "kube/json_fields.h"
#include "kube/objects.h"
#include "sim/openshell_flow.h"
#include "sim/scenario.h"
#include "sim/scenario_objects.h"
#include "sim/simulator.h"
#include "sim/store.h"
#include "test_support.h"

namespace fk::sim {
namespace {
namespace json = boost::json;

constexpr const char* kPairId = "0123456789abcdef01234567";

const ResourceKind& Sandboxes() { return *FindKind("agents.x-k8s.io", "sandboxes"); }
const ResourceKind& Pods() { return *FindKind("", "pods"); }
const ResourceKind& Policies() { return *FindKind("networking.k8s.io", "networkpolicies"); }

const json::object& Meta(const json::value& obj, const char* field) {
  static const json::object kNone;
  const json::object* o = kube::ObjectField(kube::ObjectField(obj, "metadata"), field);
  return o ? *o : kNone;
}

class SimScenarioShapes : public ::testing::Test {
 protected:
  void Apply(const std::string& yaml) {
    auto sc = ParseScenario(yaml, "test");
    ASSERT_TRUE(sc.ok()) << sc.status().ToString();
    sim_ = std::make_unique<Simulator>(sc->options);
    ASSERT_TRUE(ApplyScenario(*sim_, *sc).ok());
  }
  json::value Get(const ResourceKind& kind, const std::string& name) {
    Outcome o = sim_->store().Get(kind, "ns", name);
    EXPECT_TRUE(o.ok()) << kind.plural << " " << name << " is missing";
    return o.object;
  }
  bool Exists(const ResourceKind& kind, const std::string& name) {
    return sim_->store().Get(kind, "ns", name).ok();
  }
  json::value Uid(const ResourceKind& kind, const std::string& name) {
    return json::value(kube::MetadataString(Get(kind, name), "uid"));
  }
  std::set<std::string> Selected(const std::string& selector) {
    std::set<std::string> names;
    for (const json::value& s :
         sim_->store().List(Sandboxes(), "ns", *Selector::ParseLabels(selector), Selector()).items)
      names.insert(kube::MetadataString(s, "name"));
    return names;
  }
  static json::value TemplateLabels(const json::value& sandbox) {
    return sandbox.at("spec").at("podTemplate").at("metadata").at("labels");
  }

  std::unique_ptr<Simulator> sim_;
};

// A claimed pair: its Sandbox and workload pod keep the physical pair id's
// name, its supervisor pod is named by the pair id, not the logical id, and
// its logical id is the sandbox-id label and annotation.
TEST_F(SimScenarioShapes, AClaimedPairIsNamedByItsPairIdAndCarriesItsLogicalId) {
  Apply(std::string("namespaces: [{name: ns, fence: {generation: 2}, sandboxes: [") +
        "{name: chat, sandboxId: logical-1, warmPair: '" + kPairId + "'}]}]");
  const std::string cr = std::string("warm-") + kPairId;
  const std::string supervisor = std::string("os-supervisor-") + kPairId;
  const json::value sb = Get(Sandboxes(), cr);
  const json::object& labels = Meta(sb, "labels");
  const json::object& ann = Meta(sb, "annotations");
  EXPECT_EQ(labels.at("openshell.ai/managed-by"), "openshell");
  EXPECT_EQ(labels.at(kube::kSandboxIdLabel), "logical-1");
  EXPECT_EQ(ann.at(kube::kSandboxIdLabel), "logical-1");
  EXPECT_EQ(ann.at("openshell.ai/warm-pair-id"), kPairId);
  EXPECT_EQ(labels.at("openshell.ai/template-id"), "default");
  // The claim took the pool's labels off (reference B.2).
  EXPECT_FALSE(labels.contains("openshell.ai/warm-pool"));
  EXPECT_FALSE(labels.contains("openshell.ai/warm-pool-state"));
  EXPECT_FALSE(ann.contains(kube::kBootstrappingAnnotation));
  EXPECT_EQ(sb.at("spec").at("operatingMode"), "Running");

  // Admitted as an ordinary sandbox: the current fence, its own pods.
  const json::value fence = Get(Policies(), "openshell-sandbox-workloads");
  EXPECT_EQ(ann.at(kube::kFenceUidAnnotation), fence.at("metadata").at("uid"));
  EXPECT_EQ(ann.at(kube::kFenceGenerationAnnotation), "2");
  EXPECT_EQ(ann.at(kube::kWorkloadUidAnnotation), Uid(Pods(), cr));
  EXPECT_EQ(ann.at(kube::kSupervisorUidAnnotation), Uid(Pods(), supervisor));
  EXPECT_FALSE(Exists(Pods(), "os-supervisor-logical-1"));
  EXPECT_FALSE(Exists(Sandboxes(), "chat"));

  EXPECT_EQ(Meta(Get(Pods(), supervisor), "labels"),
            (json::object{{"openshell.ai/boundary-role", "supervisor"},
                          {"openshell.ai/boundary-pair", kPairId},
                          {"openshell.ai/managed-by", "openshell"}}));
  EXPECT_EQ(Meta(Get(Pods(), cr), "labels"), TemplateLabels(sb));
  EXPECT_EQ(TemplateLabels(sb), (json::object{{"openshell.ai/boundary-role", "workload"},
                                              {"openshell.ai/boundary-pair", kPairId}}));
}

// A spare: no sandbox id at all, ready in its pool, its bootstrap released,
// admitted under the current fence; pods as for a claimed pair.
TEST_F(SimScenarioShapes, ASpareIsReadyInItsPoolWithoutASandboxId) {
  Apply(
      "namespaces: [{name: ns, fence: {generation: 3}, sandboxes: "
      "[{name: spare-a, warmPair: true, spare: true, warmPool: python}]}]");
  const std::string id = DerivedWarmPairId("spare-a");
  ASSERT_TRUE(IsWarmPairId(id)) << id;
  const json::value sb = Get(Sandboxes(), "warm-" + id);
  const json::object& labels = Meta(sb, "labels");
  const json::object& ann = Meta(sb, "annotations");
  EXPECT_FALSE(labels.contains(kube::kSandboxIdLabel));
  EXPECT_FALSE(ann.contains(kube::kSandboxIdLabel));
  EXPECT_EQ(labels.at("openshell.ai/warm-pool"), "python");
  EXPECT_EQ(labels.at("openshell.ai/warm-pool-state"), "ready");
  EXPECT_EQ(ann.at("openshell.ai/warm-pair-id"), json::value(id));
  EXPECT_EQ(ann.at(kube::kBootstrappingAnnotation), "true");
  EXPECT_EQ(ann.at(kube::kBootstrapOperationAnnotation), "create");
  EXPECT_EQ(ann.at(kube::kBootstrapPhaseAnnotation), "released");
  EXPECT_EQ(sb.at("spec").at("operatingMode"), "Running");
  EXPECT_EQ(ann.at(kube::kFenceGenerationAnnotation), "3");
  EXPECT_EQ(ann.at(kube::kWorkloadUidAnnotation), Uid(Pods(), "warm-" + id));
  EXPECT_EQ(ann.at(kube::kSupervisorUidAnnotation), Uid(Pods(), "os-supervisor-" + id));
  EXPECT_EQ(Meta(Get(Pods(), "warm-" + id), "labels"), TemplateLabels(sb));
  // The same name derives the same id on every run.
  EXPECT_EQ(DerivedWarmPairId("spare-a"), id);
  EXPECT_NE(DerivedWarmPairId("spare-b"), id);
}

// The Sandbox selector the controller defaults to requires the sandbox-id
// label to exist, as OpenShell's own reconciler does: every sandbox but the spare.
TEST_F(SimScenarioShapes, TheDefaultSelectorSelectsEverySandboxButTheSpare) {
  Apply(std::string("namespaces: [{name: ns, sandboxes: [{name: a}, {name: b, mode: Suspended},") +
        "{name: claimed, warmPair: '" + kPairId + "'}, {name: s, warmPair: true, spare: true}]}]");
  EXPECT_EQ(Selected("openshell.ai/managed-by=openshell,openshell.ai/sandbox-id"),
            (std::set<std::string>{"a", "b", std::string("warm-") + kPairId}));
  EXPECT_EQ(Selected("openshell.ai/managed-by=openshell").size(), 4u);
  // A claimed pair named by the entry's name alone: its logical id is the name.
  EXPECT_EQ(
      Meta(Get(Sandboxes(), std::string("warm-") + kPairId), "labels").at(kube::kSandboxIdLabel),
      "claimed");
}

// The user's template labels reach the workload pod, under the two boundary
// labels OpenShell forces; a pod agent-sandbox makes again on resume carries
// the same labels.
TEST_F(SimScenarioShapes, WorkloadPodsCarryTheTemplateLabelsExactly) {
  Apply(
      "namespaces: [{name: ns, sandboxes: [{name: a, podLabels: {team: ml, "
      "openshell.ai/boundary-role: supervisor, openshell.ai/boundary-pair: b}}]}]");
  const json::object want{{"team", "ml"},
                          {"openshell.ai/boundary-role", "workload"},
                          {"openshell.ai/boundary-pair", "a"}};
  EXPECT_EQ(TemplateLabels(Get(Sandboxes(), "a")), want);
  EXPECT_EQ(Meta(Get(Pods(), "a"), "labels"), want);
  EXPECT_EQ(Meta(Get(Pods(), "os-supervisor-a"), "labels").at("openshell.ai/boundary-pair"), "a");

  auto set_mode = [&](const char* mode) {
    sim_->store().Mutate(
        Sandboxes(), "ns", "a",
        [&](json::value& o) -> std::optional<ApiFailure> {
          o.at("spec").as_object()["operatingMode"] = mode;
          return std::nullopt;
        },
        false);
  };
  const json::value first = Uid(Pods(), "a");
  set_mode("Suspended");
  ASSERT_FALSE(Exists(Pods(), "a"));
  set_mode("Running");
  EXPECT_NE(Uid(Pods(), "a"), first);
  EXPECT_EQ(Meta(Get(Pods(), "a"), "labels"), want);
}

// `networkPolicies`: created after the sandboxes, as any client's, with the
// API server's policyTypes defaulting.
TEST_F(SimScenarioShapes, ExtraNetworkPoliciesAreCreatedDefaulted) {
  Apply(R"(
namespaces:
  - name: ns
    networkPolicies:
      - name: allow-dns
        spec:
          podSelector: {matchLabels: {openshell.ai/boundary-role: workload}}
          egress: [{ports: [{protocol: UDP, port: 53}]}]
      - {name: deny-all}
)");
  const json::value dns = Get(Policies(), "allow-dns");
  EXPECT_EQ(dns.at("spec").at("policyTypes"), (json::array{"Ingress", "Egress"}));
  EXPECT_EQ(dns.at("spec").at("egress").at(0).at("ports").at(0).at("port"), 53);
  EXPECT_EQ(dns.at("metadata").at("generation"), 1);
  EXPECT_FALSE(kube::MetadataString(dns, "uid").empty());
  EXPECT_EQ(Get(Policies(), "deny-all").at("spec").at("policyTypes"), json::array{"Ingress"});
  EXPECT_TRUE(Exists(Policies(), "openshell-sandbox-workloads"));
}

TEST(SimScenarioErrors, WarmPairsAndPoliciesAreChecked) {
  const std::pair<const char*, const char*> cases[] = {
      {"[{name: a, warmPair: 0123456789ABCDEF01234567}]", "24 lowercase hex digits"},
      {"[{name: a, warmPair: abc}]", "24 lowercase hex digits"},
      {"[{name: a, spare: true}]", "for warm-pool pairs"},
      {"[{name: a, warmPool: x}]", "for warm-pool pairs"},
      {"[{name: a, warmPair: true, spare: true, sandboxId: x}]", "a spare has no sandboxId"},
      {"[{name: a, warmPair: true, spare: true, mode: Suspended}]", "a spare is Running"},
      {"[{name: a, warmpair: true}]", "unknown field 'warmpair'"},
      {"[{name: a, podLabels: [x]}]", "podLabels must be a mapping"},
  };
  for (const auto& [sandboxes, want] : cases) {
    auto sc = ParseScenario(std::string("namespaces: [{name: n, sandboxes: ") + sandboxes + "}]",
                            "bad.yaml");
    ASSERT_FALSE(sc.ok()) << sandboxes;
    EXPECT_NE(sc.status().message().find(want), std::string::npos) << sc.status().message();
  }
  for (const auto& [policies, want] : std::initializer_list<std::pair<const char*, const char*>>{
           {"[{spec: {}}]", "every policy needs a name"},
           {"[{name: p, spec: [1]}]", "spec must be a mapping"},
           {"[{name: p, selector: {}}]", "unknown field 'selector'"},
           {"{name: p}", "must be a list"}}) {
    auto sc = ParseScenario(
        std::string("namespaces: [{name: n, networkPolicies: ") + policies + "}]", "bad.yaml");
    ASSERT_FALSE(sc.ok()) << policies;
    EXPECT_NE(sc.status().message().find(want), std::string::npos) << sc.status().message();
  }
  EXPECT_TRUE(
      ParseScenario("namespaces: [{name: n, sandboxes: [{name: a, warmPair: false}]}]", "ok").ok());
}

// AddNetworkPolicy creates, then replaces the spec of the same object (its
// uid kept, the generation moving only with the spec); DeleteNetworkPolicy
// removes it and says NotFound when there is none.
TEST_F(SimScenarioShapes, AddAndDeleteNetworkPolicy) {
  Apply("namespaces: [{name: ns, fence: false}]");
  const json::value dns = AllowDnsEgressSpec();
  EXPECT_FALSE(dns.at("egress").as_array().empty());
  EXPECT_FALSE(dns.as_object().contains("policyTypes"));

  ASSERT_TRUE(AddNetworkPolicy(*sim_, "ns", "allow-dns", dns).ok());
  const json::value created = Get(Policies(), "allow-dns");
  EXPECT_EQ(created.at("spec").at("policyTypes"), (json::array{"Ingress", "Egress"}));
  EXPECT_EQ(created.at("spec").at("podSelector"),
            (json::object{{"matchLabels", {{"openshell.ai/boundary-role", "workload"}}}}));
  EXPECT_EQ(created.at("metadata").at("generation"), 1);

  ASSERT_TRUE(AddNetworkPolicy(*sim_, "ns", "allow-dns", dns).ok());
  EXPECT_EQ(Get(Policies(), "allow-dns"), created) << "the same spec again changes nothing";

  json::value narrower = dns;
  narrower.at("egress").at(0).at("ports").as_array().pop_back();
  ASSERT_TRUE(AddNetworkPolicy(*sim_, "ns", "allow-dns", narrower).ok());
  const json::value replaced = Get(Policies(), "allow-dns");
  EXPECT_EQ(replaced.at("metadata").at("uid"), created.at("metadata").at("uid"));
  EXPECT_EQ(replaced.at("metadata").at("generation"), 2);
  EXPECT_EQ(replaced.at("spec").at("egress").at(0).at("ports").as_array().size(), 1u);

  ASSERT_TRUE(DeleteNetworkPolicy(*sim_, "ns", "allow-dns").ok());
  EXPECT_FALSE(Exists(Policies(), "allow-dns"));
  const Status again = DeleteNetworkPolicy(*sim_, "ns", "allow-dns");
  EXPECT_EQ(again.code(), Code::kNotFound) << again.ToString();
}

// The built-in scenario the demo of the effective fence starts from.
TEST_F(SimScenarioShapes, TheWarmPoolAndBypassScenarioHoldsWhatItSays) {
  auto sc = ParseScenarioFile("warm-pool-and-bypass");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  ASSERT_EQ(sc->namespaces.size(), 1u);
  const std::string ns = sc->namespaces[0].name;
  sim_ = std::make_unique<Simulator>(sc->options);
  ASSERT_TRUE(ApplyScenario(*sim_, *sc).ok());
  int running = 0, suspended = 0, spares = 0, claimed = 0;
  for (const json::value& s : sim_->store().List(Sandboxes(), ns, Selector(), Selector()).items) {
    const json::object& labels = Meta(s, "labels");
    if (labels.contains("openshell.ai/warm-pool"))
      ++spares;
    else if (Meta(s, "annotations").contains("openshell.ai/warm-pair-id"))
      ++claimed;
    else if (s.at("spec").at("operatingMode") == "Running")
      ++running;
    else
      ++suspended;
  }
  EXPECT_EQ(running, 2);
  EXPECT_EQ(suspended, 1);
  EXPECT_EQ(claimed, 1);
  EXPECT_EQ(spares, 1);
  // allow-dns is the demo's to add: only the fence's two policies at start.
  EXPECT_EQ(sim_->store().List(Policies(), ns, Selector(), Selector()).items.size(), 2u);
  ASSERT_TRUE(AddNetworkPolicy(*sim_, ns, "allow-dns", AllowDnsEgressSpec()).ok());
  // It selects every workload pod: the running sandboxes', the claimed pair's, the spare's.
  const json::value dns = sim_->store().Get(Policies(), ns, "allow-dns").object;
  std::string selector;
  for (const auto& [key, value] : dns.at("spec").at("podSelector").at("matchLabels").as_object())
    selector +=
        (selector.empty() ? "" : ",") + std::string(key) + "=" + std::string(value.as_string());
  std::set<std::string> selected;
  for (const json::value& pod :
       sim_->store().List(Pods(), ns, *Selector::ParseLabels(selector), Selector()).items)
    selected.insert(kube::MetadataString(pod, "name"));
  EXPECT_EQ(selected, (std::set<std::string>{"agent-1", "agent-2", "warm-3f9c0a17b2d45e68c1a2b3c4",
                                             "warm-9b1e77d04c2a86f3e5d0a719"}));
}

// OpenShell's resume played on a claimed pair (sim/openshell_flow.h) replaces
// and records the supervisor named by the pair id, as OpenShell's driver does
// (reference A.3), not one named by the Sandbox's name or the logical id.
TEST_F(SimScenarioShapes, AResumeOfAClaimedPairReplacesTheSupervisorNamedByItsPairId) {
  Apply(std::string("namespaces: [{name: ns, sandboxes: [") +
        "{name: chat, sandboxId: logical-1, mode: Suspended, warmPair: '" + kPairId + "'}]}]");
  const std::string cr = std::string("warm-") + kPairId;
  const std::string supervisor = std::string("os-supervisor-") + kPairId;
  const json::value old_supervisor = Uid(Pods(), supervisor);
  OpenShellFlow flow{OpenShellFlow::Type::kResume, "ns", cr, 0, "", 0};
  for (int i = 0; i < 10 && !flow.Done(); ++i) AdvanceOpenShellFlow(*sim_, flow);
  ASSERT_TRUE(flow.Done());
  const json::value sb = Get(Sandboxes(), cr);
  EXPECT_EQ(sb.at("spec").at("operatingMode"), "Running");
  EXPECT_NE(Uid(Pods(), supervisor), old_supervisor) << "replaced";
  EXPECT_EQ(Meta(sb, "annotations").at(kube::kSupervisorUidAnnotation), Uid(Pods(), supervisor));
  EXPECT_EQ(Meta(Get(Pods(), supervisor), "labels").at("openshell.ai/boundary-pair"),
            json::value(kPairId));
  EXPECT_FALSE(Exists(Pods(), "os-supervisor-" + cr));
  EXPECT_FALSE(Exists(Pods(), "os-supervisor-logical-1"));
}

// README's "Simulator scenarios" example is a scenario the simulator reads,
// every field it shows included (a sandbox's unknown field is an error).
TEST(SimScenarioDocs, TheReadmeExampleScenarioParses) {
  const std::string readme = testing::ReadBytes(std::string(FK_SOURCE_DIR) + "/README.md");
  const size_t section = readme.find("### Simulator scenarios");
  ASSERT_NE(section, std::string::npos);
  const size_t begin = readme.find("```yaml\n", section);
  ASSERT_NE(begin, std::string::npos);
  const size_t end = readme.find("```", begin + 8);
  auto sc = ParseScenario(readme.substr(begin + 8, end - begin - 8), "README.md");
  ASSERT_TRUE(sc.ok()) << sc.status().ToString();
  ASSERT_EQ(sc->namespaces.size(), 1u);
  EXPECT_EQ(sc->namespaces[0].network_policies.size(), 1u);
  int pairs = 0;
  for (const ScenarioSandbox& sb : sc->namespaces[0].sandboxes) pairs += !sb.warm_pair_id.empty();
  EXPECT_EQ(pairs, 2);
}

}  // namespace
}  // namespace fk::sim
