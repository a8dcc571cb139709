// Journal payload encoding: every event kind round-trips, and a corrupt
// payload is a Corruption status that names the field.
#include <gtest/gtest.h>

#include "journal/codec.h"
#include "test_support.h"

namespace fk::journal {
namespace {
using namespace fk::domain;

TEST(Codec, EveryEventKindRoundTrips) {
  Snapshot snap = testing::StaleSnapshot();
  snap.sandbox.fence_generation.reset();
  snap.sandbox.bootstrapping = true;
  snap.sandbox.bootstrap_op = BootstrapOp::kRestart;
  snap.sandbox.api_version = ApiVersion::kV1alpha1;
  snap.history = {12, 7};
  const EventBody bodies[] = {
      FenceObserved{kWorkloadPolicyName, {true, "fence-uid", 2, false}},
      SandboxObserved{snap},
      Decided{decide(snap)},
      SuspendIntent{Reason::kFenceStale, 3, "4711", ApiVersion::kV1alpha1, "fence generation 1 -> 2"},
      SuspendOutcome{Outcome::kApplied, 4, ""},
      SuspendOutcome{Outcome::kConflict, std::nullopt, "409: object changed"},
  };
  for (const EventBody& body : bodies) {
    Event e;
    e.body = body;
    auto decoded = DecodePayload(e.kind(), EncodePayload(body));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_TRUE(*decoded == body) << EncodePayload(body);
  }
}

TEST(Codec, CorruptPayloadNamesTheProblem) {
  auto not_json = DecodePayload(EventKind::kDecided, "{nope");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.status().code(), Code::kCorruption);

  auto bad_verdict =
      DecodePayload(EventKind::kDecided, R"({"verdict":"maybe","reason":"","action":"none","note":""})");
  ASSERT_FALSE(bad_verdict.ok());
  EXPECT_NE(bad_verdict.status().message().find("verdict"), std::string::npos);

  std::string snap = EncodeSnapshot(testing::HealthySnapshot());
  snap.replace(snap.find("\"generation\":2"), 14, "\"generation\":\"2\"");
  auto bad_snapshot = DecodeSnapshot(snap);
  ASSERT_FALSE(bad_snapshot.ok());
  EXPECT_NE(bad_snapshot.status().message().find("snapshot.sandbox: field 'generation' is not an integer"),
            std::string::npos)
      << bad_snapshot.status().message();
}

}  // namespace
}  // namespace fk::journal
