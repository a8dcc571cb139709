// The Sandbox writes spelled in JSON (kube/sandbox_api.h) and the resource
// paths (kube/paths.h): the suspend PATCH is a contract
// (docs/design.md#the-suspend-patch), so its every field is checked here.
#include "kube/sandbox_api.h"

#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "kube/paths.h"

namespace fk::kube {
namespace {
namespace json = boost::json;

TEST(SuspendPatchBody, CarriesThePreconditionTheIntentAndTheVersionsWayOfStopping) {
  const json::value beta = json::parse(
      SuspendPatchBody({domain::ApiVersion::kV1beta1, "41", "fence-stale", IntentMark{7, "w-1"}}));
  const json::value expected_meta = json::parse(R"({"resourceVersion":"41","annotations":{
      "openshell.ai/sandbox-runtime-readiness":"unavailable",
      "openshell.ai/fail-closed-reason":"fence-stale",
      "openshell.ai/fail-closed-journal-seq":"7",
      "openshell.ai/fail-closed-journal-writer":"w-1"}})");
  EXPECT_EQ(beta.at("metadata"), expected_meta);
  EXPECT_EQ(beta.at("spec"), json::parse(R"({"operatingMode":"Suspended"})"));
  EXPECT_EQ(beta.as_object().size(), 2u);

  const json::value alpha = json::parse(
      SuspendPatchBody({domain::ApiVersion::kV1alpha1, "41", "fence-stale", IntentMark{7, "w-1"}}));
  EXPECT_EQ(alpha.at("metadata"), expected_meta);
  EXPECT_EQ(alpha.at("spec"), json::parse(R"({"replicas":0})"));
}

TEST(SandboxPath, NamesTheVersionAndRefusesANameTheServerCouldNotHaveIssued) {
  EXPECT_EQ(*SandboxPath(domain::ApiVersion::kV1alpha1, "ns", "sb"),
            "/apis/agents.x-k8s.io/v1alpha1/namespaces/ns/sandboxes/sb");
  EXPECT_FALSE(SandboxPath(domain::ApiVersion::kV1beta1, "ns", "../x").ok());
  EXPECT_EQ(ApiVersionOf(SandboxResource(domain::ApiVersion::kV1beta1)), "agents.x-k8s.io/v1beta1");
  EXPECT_EQ(ApiVersionOf(PodResource()), "v1");
  EXPECT_EQ(ResourcePath(LeaseResource(), "ns"),
            "/apis/coordination.k8s.io/v1/namespaces/ns/leases");
  EXPECT_EQ(ResourcePath(NamespaceResource(), "", "ns"), "/api/v1/namespaces/ns");
}

TEST(AnswerFields, GenerationAndUidAreReadOrAbsent) {
  EXPECT_EQ(GenerationOf(R"({"metadata":{"generation":3,"uid":"u"}})"), 3);
  EXPECT_EQ(UidOf(R"({"metadata":{"generation":3,"uid":"u"}})"), "u");
  for (const char* odd : {"", "[]", "not json", R"({"metadata":{"generation":"3","uid":4}})"}) {
    EXPECT_EQ(GenerationOf(odd), std::nullopt) << odd;
    EXPECT_EQ(UidOf(odd), "") << odd;
  }
}

}  // namespace
}  // namespace fk::kube
