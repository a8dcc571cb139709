// The boundary as OpenShell builds it today and as the network enforces it
// (docs/design.md#the-effective-fence), one pass at a time over the in-process
// simulator: warm-pool pairs, spares, the supervisor policy's role, and other
// NetworkPolicies that open the fence without touching it.
#include <gtest/gtest.h>

#include "sandbox_reconciler_fixture.h"

namespace fk::reconciler {
namespace {

constexpr const char* kPolicies = "/apis/networking.k8s.io/v1/namespaces/ns/networkpolicies";

// Two sandboxes admitted under the current fence: "a" running, "b" stopped.
constexpr const char* kHealthyScenario = R"(
namespaces:
  - name: ns
    sandboxes:
      - {name: a, mode: Running}
      - {name: b, mode: Suspended}
)";

// "Allow DNS" for every workload pod of the namespace: a widening policy.
constexpr const char* kAllowDns = R"({"metadata":{"name":"allow-dns"},"spec":{
    "podSelector":{"matchLabels":{"openshell.ai/boundary-role":"workload"}},
    "egress":[{"ports":[{"port":53,"protocol":"UDP"}]}]}})";

class EffectiveFenceTest : public SandboxReconcilerTest {
 protected:
  const char* Scenario() const override { return kHealthyScenario; }

  void Post(const std::string& collection, const std::string& body) {
    const sim::ApiReply r = sim::HandleRequest(*sim_, {"POST", collection, body, ""}, "sim");
    ASSERT_LT(r.status, 300) << r.body;
  }
  void Delete(const std::string& target) {
    const sim::ApiReply r = sim::HandleRequest(*sim_, {"DELETE", target, "", ""}, "sim");
    ASSERT_LT(r.status, 300) << r.body;
  }
  // The journal's latest decision for the sandbox named `name`.
  std::optional<domain::Decision> Decided(const std::string& name) {
    for (const auto& [uid, r] : State().sandboxes)
      if (r.name == name && r.decision) return *r.decision;
    return std::nullopt;
  }
  size_t Intents() {
    size_t n = 0;
    for (const domain::Event& e : Events())
      n += std::holds_alternative<domain::SuspendIntent>(e.body);
    return n;
  }
  // Makes sandbox `name` a claimed warm-pool pair: its pods are named by the
  // pair id `pair`, its sandbox id is a logical one.
  void Claim(const std::string& name, const std::string& pair) {
    Post(kPods, R"({"metadata":{"name":"os-supervisor-)" + pair +
                    R"(","labels":{"openshell.ai/boundary-role":"supervisor"}}})");
    const std::string uid = kube::MetadataString(Server(kPods, "os-supervisor-" + pair), "uid");
    ServerPatch(
        std::string(kSandboxes) + "/" + name,
        json::parse(R"({"metadata":{"labels":{"openshell.ai/sandbox-id":"logical-)" + name +
                    R"("},"annotations":{"openshell.ai/warm-pair-id":")" + pair +
                    R"(","openshell.ai/sandbox-id":"logical-)" + name +
                    R"(","openshell.ai/sandbox-runtime-supervisor-uid":")" + uid + R"("}}})"));
  }
};

// A claimed pair's supervisor is os-supervisor-<pair id>: found, it is
// healthy; when that pod goes, it is suspended once.
TEST_P(EffectiveFenceTest, AClaimedPairStaysHealthyAndIsSuspendedOnceWhenItsSupervisorGoes) {
  Claim("a", "0a1b2c3d4e5f60718293a4b5");
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  ASSERT_TRUE(Decided("a"));
  EXPECT_EQ(Decided("a")->verdict, domain::Verdict::kHealthy) << Decided("a")->note;
  EXPECT_EQ(Sent("PATCH"), 0);
  Delete(std::string(kPods) + "/os-supervisor-0a1b2c3d4e5f60718293a4b5");
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Mode("a"), "Suspended");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"applied"});
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 1);
}

// A spare (a pool pair without a sandbox id) is OpenShell's: never written
// to, even behind a rolled fence and when a selector lets it in.
TEST_P(EffectiveFenceTest, ASpareIsNeverPatchedBehindAStaleFence) {
  ServerPatch(std::string(kSandboxes) + "/a",
              json::parse(R"({"metadata":{"labels":{"openshell.ai/sandbox-id":null,
                  "openshell.ai/warm-pool":"default"},"annotations":{
                  "openshell.ai/warm-pair-id":"a"}}})"));
  sim::RollFence(*sim_, "ns");
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 0);
  EXPECT_EQ(Intents(), 0u);
  ASSERT_TRUE(Decided("a"));
  EXPECT_EQ(Decided("a")->verdict, domain::Verdict::kIgnore);
  EXPECT_EQ(Mode("a"), "Running");
}

TEST_P(EffectiveFenceTest, ADeletedSupervisorPolicySuspendsNobody) {
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);  // seen present first
  Delete(std::string(kPolicies) + "/" + domain::kSupervisorPolicyName);
  SyncCache();
  for (const char* name : {"a", "b"})
    EXPECT_EQ(reconciler_->Reconcile({"ns", name}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 0);
  EXPECT_EQ(Intents(), 0u);
  EXPECT_EQ(Decided("a")->verdict, domain::Verdict::kHealthy);
  // Journaled as a fence observation all the same.
  bool absent_recorded = false;
  for (const domain::Event& e : Events()) {
    const auto* f = std::get_if<domain::FenceObserved>(&e.body);
    absent_recorded |= f && f->policy == domain::kSupervisorPolicyName && !f->observation.present;
  }
  EXPECT_TRUE(absent_recorded);
}

// The demo's second act: an "allow DNS" policy opens the fence of every
// workload. The running sandbox is suspended once, naming the policy; the
// stopped one is held, journaled once; a restart changes nothing.
TEST_P(EffectiveFenceTest, ABypassingPolicySuspendsTheRunningSandboxOnceAndHoldsTheStopped) {
  Post(kPolicies, kAllowDns);
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(reconciler_->Reconcile({"ns", "b"}).next, Next::kDone);
  EXPECT_EQ(Mode("a"), "Suspended");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"applied"});
  EXPECT_EQ(Decided("b")->verdict, domain::Verdict::kHold);
  EXPECT_EQ(Decided("b")->reason, domain::Reason::kFenceBypassed);
  const json::value a = Server(kSandboxes, "a");
  EXPECT_EQ(kube::StringField(kube::ObjectField(kube::ObjectField(a, "metadata"), "annotations"),
                              kube::kReasonAnnotation),
            "fence-bypassed");
  // One Warning for "a", one FailClosedHeld for "b", each naming the policy.
  ASSERT_EQ(events_.published.size(), 2u);
  EXPECT_EQ(events_.published[0].kind, FailClosedEvent::Kind::kSuspended);
  EXPECT_EQ(events_.published[1].kind, FailClosedEvent::Kind::kHeld);
  for (const FailClosedEvent& e : events_.published)
    EXPECT_NE(e.note.find("NetworkPolicy allow-dns widens egress"), std::string::npos) << e.note;
  // The recorded observation names the policy, so replay needs no policy.
  bool named = false;
  for (const domain::Event& e : Events()) {
    if (const auto* o = std::get_if<domain::SandboxObserved>(&e.body))
      named |= !o->snapshot.bypass.empty() && o->snapshot.bypass[0].name == "allow-dns";
  }
  EXPECT_TRUE(named);

  SyncCache();  // the cache shows "a" suspended: held now
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  const size_t rows = Events().size();
  for (int pass = 0; pass < 3; ++pass) {
    EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
    EXPECT_EQ(reconciler_->Reconcile({"ns", "b"}).next, Next::kDone);
  }
  EXPECT_EQ(Events().size(), rows);  // held: journaled once
  OpenJournal();
  Restart();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(reconciler_->Reconcile({"ns", "b"}).next, Next::kDone);
  EXPECT_EQ(Events().size(), rows);
  EXPECT_EQ(Sent("PATCH"), 0);  // a new process: nothing sent at all
  EXPECT_EQ(events_.published.size(), 2u);
}

// A bypass rests on caches: confirmed by live reads before its intent. A
// policy deleted before the confirmation journals nothing and sends nothing.
TEST_P(EffectiveFenceTest, ABypassPolicyDeletedBeforeConfirmationJournalsNothing) {
  Post(kPolicies, kAllowDns);
  SyncCache();
  Delete(std::string(kPolicies) + "/allow-dns");  // the cache still holds it
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  EXPECT_EQ(Sent("PATCH"), 0);
  EXPECT_EQ(Events().size(), 0u);
  EXPECT_EQ(reconciler_->stats().unconfirmed, 1);
  EXPECT_EQ(Mode("a"), "Running");
}

// Only the live objects count: a live workload pod relabelled out of the
// policy's selector is not bypassed either.
TEST_P(EffectiveFenceTest, AWorkloadRelabelledOutOfTheSelectorIsNotBypassed) {
  Post(kPolicies, R"({"metadata":{"name":"team-egress"},"spec":{"podSelector":{"matchLabels":
      {"team":"research"}},"policyTypes":["Egress"],"egress":[{}]}})");
  ServerPatch(std::string(kPods) + "/a",
              json::parse(R"({"metadata":{"labels":{"team":"research"}}})"));
  SyncCache();
  ServerPatch(std::string(kPods) + "/a", json::parse(R"({"metadata":{"labels":{"team":"ops"}}})"));
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  EXPECT_EQ(Sent("PATCH"), 0);
  EXPECT_EQ(Events().size(), 0u);
}

// A policy of another namespace never touches this one's workloads.
TEST_P(EffectiveFenceTest, APolicyOfAnotherNamespaceDoesNotBypass) {
  json::value other = json::parse(kAllowDns);
  other.at("metadata").as_object()["namespace"] = "other";
  cache_.Put(MapCache::Kind::kPolicies, "other", "allow-dns",
             std::make_shared<const json::value>(other));
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Decided("a")->verdict, domain::Verdict::kHealthy);
  EXPECT_EQ(Sent("PATCH"), 0);
}

INSTANTIATE_TEST_SUITE_P(Journals, EffectiveFenceTest,
                         ::testing::Values(JournalKind::kSqlite, JournalKind::kMemory), KindName);

}  // namespace
}  // namespace fk::reconciler
