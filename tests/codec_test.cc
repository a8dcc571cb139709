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
      SuspendIntent{Reason::kFenceStale, 3, "4711", ApiVersion::kV1alpha1,
                    "fence generation 1 -> 2"},
      SuspendOutcome{Outcome::kApplied, 4, ""},
      SuspendOutcome{Outcome::kConflict, std::nullopt, "409: object changed"},
      Leadership{"host-1/uuid", "acquired"},
      Forgotten{"deleted from the cluster"},
      Pruned{1, 40, 17, 1'800'000'000'000, 1'800'000'100'000, 39, std::string(64, 'a'),
             "journal-000000000001-000000000040.sqlite"},
  };
  static_assert(std::variant_size_v<EventBody> == 8, "a new event kind needs a case here");
  for (const EventBody& body : bodies) {
    Event e;
    e.body = body;
    auto decoded = DecodePayload(e.kind(), EncodePayload(body));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_TRUE(*decoded == body) << EncodePayload(body);
  }
}

TEST(Codec, AdmittingObservationAndDecisionRoundTrip) {
  Snapshot snap = testing::StaleSnapshot();
  snap.sandbox.bootstrapping = true;
  snap.sandbox.bootstrap_op = BootstrapOp::kCreate;
  snap.sandbox.bootstrap_phase = "preparing";
  snap.sandbox.bootstrap_started_at_ms = 1'800'000'000'000;
  snap.workload_pod.scheduling_gated = true;
  snap.supervisor_pod.scheduling_gated = true;
  snap.observed_at_ms = 1'800'000'012'345;
  const Decision d = decide(snap);
  ASSERT_EQ(d.verdict, Verdict::kAdmitting);
  ASSERT_TRUE(d.reevaluate_at_ms);
  for (const EventBody& body : {EventBody(SandboxObserved{snap}), EventBody(Decided{d})}) {
    Event e;
    e.body = body;
    auto decoded = DecodePayload(e.kind(), EncodePayload(body));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_TRUE(*decoded == body) << EncodePayload(body);
  }
  auto snapshot = DecodeSnapshot(EncodeSnapshot(snap));
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot->observed_at_ms, snap.observed_at_ms);
  EXPECT_EQ(snapshot->sandbox.bootstrap_started_at_ms, snap.sandbox.bootstrap_started_at_ms);
  auto decision = DecodeDecision(EncodeDecision(d));
  ASSERT_TRUE(decision.ok());
  EXPECT_EQ(decision->reevaluate_at_ms, d.reevaluate_at_ms);
}

// Payloads exactly as the version before row 1a wrote them: the fields it
// did not know decode to their defaults.
TEST(Codec, DecodesPayloadsWrittenBeforeAdmitting) {
  auto observed =
      DecodePayload(EventKind::kSandboxObserved, R"({"sandbox":{"namespace":"agents","name":"sb-1",
      "uid":"uid-agents-sb-1","generation":2,"api_version":"v1beta1","deleting":false,"should_run":true,
      "bootstrapping":true,"bootstrap_op":"create","fence_uid":"fence-uid","fence_generation":1,
      "workload_uid":"pod-sb-1","supervisor_uid":"sup-sb-1"},
      "workload_fence":{"present":true,"uid":"fence-uid","generation":2,"intact":true},
      "supervisor_fence":{"present":true,"uid":"sup-fence-uid","generation":1,"intact":true},
      "workload_pod":{"present":true,"uid":"pod-sb-1"},"supervisor_pod":{"present":true,"uid":"sup-sb-1"},
      "history":{"pending_intent_seq":null,"applied_generation":null}})");
  ASSERT_TRUE(observed.ok()) << observed.status().ToString();
  Snapshot want = testing::StaleSnapshot();
  want.sandbox.bootstrapping = true;
  want.sandbox.bootstrap_op = BootstrapOp::kCreate;
  EXPECT_TRUE(std::get<SandboxObserved>(*observed).snapshot == want);

  auto decided = DecodePayload(
      EventKind::kDecided,
      R"({"verdict":"suspend","reason":"fence-stale","action":"patch-suspend","note":"x"})");
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_TRUE(
      std::get<Decided>(*decided).decision ==
      (Decision{Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend, "x", std::nullopt}));
}

TEST(Codec, MalformedAdmittingFieldsAreCorruption) {
  std::string snap = EncodeSnapshot(testing::HealthySnapshot());
  snap.replace(snap.find("\"observed_at_ms\":0"), 18, "\"observed_at_ms\":\"0\"");
  auto bad_time = DecodeSnapshot(snap);
  ASSERT_FALSE(bad_time.ok());
  EXPECT_NE(bad_time.status().message().find("observed_at_ms"), std::string::npos)
      << bad_time.status().message();
  std::string gate = EncodeSnapshot(testing::HealthySnapshot());
  gate.replace(gate.find("\"scheduling_gated\":false"), 24, "\"scheduling_gated\":1");
  auto bad_gate = DecodeSnapshot(gate);
  ASSERT_FALSE(bad_gate.ok());
  EXPECT_NE(bad_gate.status().message().find("scheduling_gated"), std::string::npos);
  auto bad_reevaluate =
      DecodeDecision(R"({"verdict":"admitting","reason":"","action":"none","note":"",
                                           "reevaluate_at_ms":"soon"})");
  ASSERT_FALSE(bad_reevaluate.ok());
  EXPECT_NE(bad_reevaluate.status().message().find("reevaluate_at_ms"), std::string::npos);
}

TEST(Codec, CorruptPayloadNamesTheProblem) {
  auto not_json = DecodePayload(EventKind::kDecided, "{nope");
  ASSERT_FALSE(not_json.ok());
  EXPECT_EQ(not_json.status().code(), Code::kCorruption);

  auto bad_verdict = DecodePayload(EventKind::kDecided,
                                   R"({"verdict":"maybe","reason":"","action":"none","note":""})");
  ASSERT_FALSE(bad_verdict.ok());
  EXPECT_NE(bad_verdict.status().message().find("verdict"), std::string::npos);

  std::string snap = EncodeSnapshot(testing::HealthySnapshot());
  snap.replace(snap.find("\"generation\":2"), 14, "\"generation\":\"2\"");
  auto bad_snapshot = DecodeSnapshot(snap);
  ASSERT_FALSE(bad_snapshot.ok());
  EXPECT_NE(bad_snapshot.status().message().find(
                "snapshot.sandbox: field 'generation' is not an integer"),
            std::string::npos)
      << bad_snapshot.status().message();
}

}  // namespace
}  // namespace fk::journal
