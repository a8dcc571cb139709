// The effective fence (docs/design.md#the-effective-fence): which other
// NetworkPolicy selects a workload pod and widens what it may reach, read
// from policy JSON as the API server stores it (kube/network_policy.h) and
// judged by the pure rules of domain/effective_fence.h. Each shape the
// contract names is here, widening and not.
#include "domain/effective_fence.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "common/label_set.h"
#include "domain/observation.h"
#include "kube/network_policy.h"

namespace fk::domain {
namespace {
namespace json = boost::json;

// An OpenShell workload pod: its role, its pair, one user template label.
const LabelSet& Workload() {
  static const LabelSet labels = LabelSet::Of({{"openshell.ai/boundary-role", "workload"},
                                               {"openshell.ai/boundary-pair", "sb-1"},
                                               {"team", "research"}},
                                              "");
  return labels;
}

std::vector<WideningPolicy> Widening(const std::string& name, const std::string& spec) {
  const json::value v = json::parse(spec);
  NamedPolicy p{name, "uid-" + name, 4, kube::ReadPolicyRules(&v, kDefaultBoundaryPort)};
  return WideningPolicies({p}, [](const std::string& k) { return Workload().Get(k, ""); });
}

Widens WidensAs(const std::string& spec) {
  auto w = Widening("p", spec);
  return w.empty() ? Widens::kNone : w.front().widens;
}

constexpr const char* kRole = R"({"matchLabels":{"openshell.ai/boundary-role":"workload"}})";

std::string Spec(const std::string& selector, const std::string& rest) {
  return R"({"podSelector":)" + selector + (rest.empty() ? "" : "," + rest) + "}";
}

TEST(EffectiveFence, AnEgressRuleWidensEgressWhereverItLeads) {
  EXPECT_EQ(WidensAs(Spec(kRole, R"("policyTypes":["Egress"],"egress":[{"ports":[{"port":53,
      "protocol":"UDP"}]}])")),
            Widens::kEgress);
  // An empty rule allows everything.
  EXPECT_EQ(WidensAs(Spec(kRole, R"("policyTypes":["Egress"],"egress":[{}])")), Widens::kEgress);
}

TEST(EffectiveFence, AnIngressRuleFromElsewhereWidensIngress) {
  EXPECT_EQ(WidensAs(Spec(kRole, R"("policyTypes":["Ingress"],"ingress":[{"from":[{
      "namespaceSelector":{}}],"ports":[{"port":2222}]}])")),
            Widens::kIngress);
  // The fence's own peer on another port is another rule.
  EXPECT_EQ(WidensAs(Spec(kRole, R"("policyTypes":["Ingress"],"ingress":[{"from":[{"podSelector":
      {"matchLabels":{"openshell.ai/boundary-role":"supervisor"}}}],"ports":[{"port":22}]}])")),
            Widens::kIngress);
}

// The API server defaults an absent policyTypes to Ingress, plus Egress when
// there are egress rules: an egress section alone still opens egress.
TEST(EffectiveFence, PolicyTypesAbsentWithAnEgressSectionWidensEgress) {
  EXPECT_EQ(WidensAs(Spec(kRole, R"("egress":[{"to":[{"ipBlock":{"cidr":"0.0.0.0/0"}}]}])")),
            Widens::kEgress);
  EXPECT_EQ(WidensAs(Spec(kRole, R"("policyTypes":[],"egress":[{}],"ingress":[{}])")),
            Widens::kBoth);
  // Listed types are not defaulted: egress rules of a policy that isolates
  // only ingress allow nothing.
  EXPECT_EQ(WidensAs(Spec(kRole, R"("policyTypes":["Ingress"],"egress":[{}])")), Widens::kNone);
}

TEST(EffectiveFence, AnEmptySelectorSelectsTheWorkload) {
  EXPECT_EQ(WidensAs(Spec("{}", R"("policyTypes":["Egress"],"egress":[{}])")), Widens::kEgress);
  // No podSelector at all reads the same way.
  EXPECT_EQ(WidensAs(R"({"policyTypes":["Egress"],"egress":[{}]})"), Widens::kEgress);
}

TEST(EffectiveFence, MatchExpressionsSelectByEveryOperator) {
  const std::string egress = R"("policyTypes":["Egress"],"egress":[{}])";
  auto with = [&](const std::string& expr) {
    return WidensAs(Spec(R"({"matchExpressions":[)" + expr + "]}", egress));
  };
  EXPECT_EQ(with(R"({"key":"team","operator":"In","values":["research","ops"]})"), Widens::kEgress);
  EXPECT_EQ(with(R"({"key":"team","operator":"NotIn","values":["ops"]})"), Widens::kEgress);
  EXPECT_EQ(with(R"({"key":"openshell.ai/boundary-pair","operator":"Exists"})"), Widens::kEgress);
  EXPECT_EQ(with(R"({"key":"gpu","operator":"DoesNotExist"})"), Widens::kEgress);
  EXPECT_EQ(with(R"({"key":"team","operator":"In","values":["ops"]})"), Widens::kNone);
  EXPECT_EQ(with(R"({"key":"team","operator":"NotIn","values":["research"]})"), Widens::kNone);
  EXPECT_EQ(with(R"({"key":"gpu","operator":"Exists"})"), Widens::kNone);
  EXPECT_EQ(with(R"({"key":"team","operator":"DoesNotExist"})"), Widens::kNone);
}

// An operator the API server would refuse cannot be judged: the policy is
// taken to select every pod, so it can only fail closed.
TEST(EffectiveFence, AnUnreadableSelectorSelectsEveryPod) {
  EXPECT_EQ(WidensAs(Spec(R"({"matchExpressions":[{"key":"team","operator":"Gt","values":["1"]}]})",
                          R"("policyTypes":["Egress"],"egress":[{}])")),
            Widens::kEgress);
  EXPECT_EQ(WidensAs(Spec(R"({"matchLabels":{"team":7}})", R"("policyTypes":["Egress"],
      "egress":[{}])")),
            Widens::kEgress);
}

TEST(EffectiveFence, DenyAllEgressDoesNotWiden) {
  EXPECT_EQ(WidensAs(Spec(kRole, R"("policyTypes":["Egress"])")), Widens::kNone);
  EXPECT_EQ(WidensAs(Spec("{}", R"("policyTypes":["Ingress","Egress"],"egress":[],"ingress":[])")),
            Widens::kNone);
}

TEST(EffectiveFence, TheFencesOwnIngressRuleRepeatedDoesNotWiden) {
  // As the fence writes it, and with the protocol left to its TCP default.
  EXPECT_EQ(WidensAs(Spec(kRole, R"("policyTypes":["Ingress"],"ingress":[{"from":[{"podSelector":
      {"matchLabels":{"openshell.ai/boundary-role":"supervisor"}}}],"ports":[{"protocol":"TCP",
      "port":5500}]}])")),
            Widens::kNone);
  EXPECT_EQ(WidensAs(Spec(kRole, R"("ingress":[{"ports":[{"port":5500}],"from":[{"podSelector":
      {"matchLabels":{"openshell.ai/boundary-role":"supervisor"}}}]}])")),
            Widens::kNone);
}

TEST(EffectiveFence, ASelectorThatMatchesNoWorkloadDoesNotWiden) {
  // OpenShell's supervisor policy: all egress, for supervisors only.
  EXPECT_EQ(WidensAs(Spec(R"({"matchLabels":{"openshell.ai/boundary-role":"supervisor"}})",
                          R"("policyTypes":["Egress"],"egress":[{}])")),
            Widens::kNone);
  // OpenShell's SSH policy selects managed-by=openshell, which workloads lack.
  EXPECT_EQ(WidensAs(Spec(R"({"matchLabels":{"openshell.ai/managed-by":"openshell"}})",
                          R"("policyTypes":["Ingress"],"ingress":[{"ports":[{"port":2222}]}])")),
            Widens::kNone);
}

TEST(EffectiveFence, TheWorkloadFenceItselfNeverCountsAndTheListIsSortedByName) {
  const json::value widening = json::parse(Spec("{}", R"("egress":[{}])"));
  const NetworkPolicyRules rules = kube::ReadPolicyRules(&widening, kDefaultBoundaryPort);
  const std::vector<WideningPolicy> out =
      WideningPolicies({{"zz", "u1", 1, rules},
                        {"openshell-sandbox-workloads", "u0", 1, rules},
                        {"aa", "u2", 2, rules}},
                       [](const std::string& k) { return Workload().Get(k, ""); });
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0], (WideningPolicy{"aa", "u2", 2, Widens::kEgress}));
  EXPECT_EQ(out[1].name, "zz");
  EXPECT_EQ(DescribeBypass(out), "NetworkPolicy aa widens egress; NetworkPolicy zz widens egress");
}

TEST(EffectiveFence, WidensNamesRoundTrip) {
  for (Widens w : {Widens::kNone, Widens::kEgress, Widens::kIngress, Widens::kBoth})
    EXPECT_EQ(ParseWidens(ToString(w)), w);
  EXPECT_EQ(ParseWidens("sideways"), std::nullopt);
}

}  // namespace
}  // namespace fk::domain
