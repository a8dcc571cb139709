// The supervisor policy is watched for people, never a reason to suspend:
// warned once per change, listed by /readyz?verbose without making the
// replica unready, counted by state (docs/design.md#the-supervisor-policy).
#include "reconciler/supervisor_policy.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "common/log.h"
#include "domain/effective_fence.h"
#include "domain/event.h"
#include "map_cache.h"
#include "reconciler/metrics.h"

namespace fk::reconciler {
namespace {
namespace json = boost::json;
using Kind = CacheKind;

void PutPolicy(testing::MapCache& cache, const std::string& ns, const std::string& name,
               const std::string& uid, int generation, const std::string& spec) {
  cache.Put(
      Kind::kPolicies, ns, name,
      std::make_shared<const json::value>(json::parse(
          R"({"metadata":{"namespace":")" + ns + R"(","name":")" + name + R"(","uid":")" + uid +
          R"(","generation":)" + std::to_string(generation) + R"(},"spec":)" + spec + "}")));
}

constexpr const char* kSupervisorSpec = R"({"podSelector":{"matchLabels":{
    "openshell.ai/boundary-role":"supervisor"}},"policyTypes":["Egress"],"egress":[{}]})";

std::vector<std::string> Warned(const log::Capture& log) {
  std::vector<std::string> out;
  for (const log::Record& r : log.Matching(log::Level::kWarn, "supervisor policy"))
    out.push_back(*r.Get("namespace") + " " + r.msg);
  return out;
}

TEST(SupervisorPolicy, EachChangeIsWarnedOnceListedReadyAndCounted) {
  testing::MapCache cache;
  for (const char* ns : {"a", "b", "unfenced"}) {
    if (std::string(ns) != "unfenced")
      PutPolicy(cache, ns, domain::kWorkloadPolicyName, "w", 1, "{}");
    PutPolicy(cache, ns, domain::kSupervisorPolicyName, std::string("s-") + ns, 1, kSupervisorSpec);
  }
  SupervisorPolicyWatch watch;
  log::Capture log(log::Level::kInfo);
  watch.Update(cache);
  EXPECT_TRUE(Warned(log).empty());
  EXPECT_TRUE(watch.Checks().empty());

  cache.Put(Kind::kPolicies, "a", domain::kSupervisorPolicyName, nullptr);  // deleted
  PutPolicy(cache, "b", domain::kSupervisorPolicyName, "s-b", 2, R"({"podSelector":{}})");
  watch.Update(cache);
  watch.Update(cache);  // a resync: nothing new to say
  EXPECT_EQ(Warned(log), (std::vector<std::string>{"a supervisor policy missing",
                                                   "b supervisor policy altered"}));
  const std::vector<ReadinessCheck> checks = watch.Checks();
  ASSERT_EQ(checks.size(), 2u);
  for (const ReadinessCheck& c : checks) EXPECT_TRUE(c.ok) << c.name;  // never unready
  EXPECT_EQ(checks[0].name, "supervisor-policy a");
  EXPECT_NE(checks[0].reason.find("missing: OpenShell re-creates it"), std::string::npos);
  EXPECT_EQ(watch.Counts(),
            (std::map<std::string, int>{{"intact", 0}, {"missing", 1}, {"altered", 1}}));

  // Altered again (a new generation) is a change; re-created is said at info.
  PutPolicy(cache, "b", domain::kSupervisorPolicyName, "s-b", 3, R"({"podSelector":{}})");
  PutPolicy(cache, "a", domain::kSupervisorPolicyName, "s-a2", 1, kSupervisorSpec);
  watch.Update(cache);
  EXPECT_EQ(Warned(log).size(), 3u);
  EXPECT_EQ(log.Matching(log::Level::kInfo, "supervisor policy intact again").size(), 1u);
  EXPECT_EQ(watch.Counts(),
            (std::map<std::string, int>{{"intact", 1}, {"missing", 0}, {"altered", 1}}));
}

TEST(SupervisorPolicy, TheBypassGaugeHasASeriesPerNamespaceThatReadsZeroOnceThenGoes) {
  Metrics m;
  m.BypassedSandboxes({{"team-a", 2}});
  EXPECT_NE(
      m.Render().find(R"(fencekeeper_fence_bypassed_sandboxes{sandbox_namespace="team-a"} 2)"),
      std::string::npos);
  m.BypassedSandboxes({});
  EXPECT_NE(
      m.Render().find(R"(fencekeeper_fence_bypassed_sandboxes{sandbox_namespace="team-a"} 0)"),
      std::string::npos);
  m.BypassedSandboxes({});
  EXPECT_EQ(m.Render().find("sandbox_namespace=\"team-a\""), std::string::npos);
}

TEST(SupervisorPolicy, OnlyThePolicyApisFencekeeperDoesNotEvaluateAreNamed) {
  EXPECT_EQ(domain::UnevaluatedPolicyApis({"apps", "networking.k8s.io", "cilium.io",
                                           "policy.networking.k8s.io", "agents.x-k8s.io"}),
            (std::vector<std::string>{"policy.networking.k8s.io", "cilium.io"}));
  EXPECT_TRUE(domain::UnevaluatedPolicyApis({"apps", "networking.k8s.io"}).empty());
}

}  // namespace
}  // namespace fk::reconciler
