// Journal payload encoding: every event kind round-trips, and a corrupt
// payload is a Corruption status that names the field.
#include <gtest/gtest.h>

#include <boost/json.hpp>

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
  snap.history = {12, 7, 5};
  Snapshot dry_run = snap;
  dry_run.dry_run = true;
  const EventBody bodies[] = {
      FenceObserved{kWorkloadPolicyName, {true, "fence-uid", 2, false}},
      SandboxObserved{snap},
      SandboxObserved{dry_run},
      Decided{decide(snap)},
      SuspendIntent{Reason::kFenceStale, 3, "4711", ApiVersion::kV1alpha1,
                    "fence generation 1 -> 2"},
      SuspendOutcome{Outcome::kApplied, 4, ""},
      SuspendOutcome{Outcome::kConflict, std::nullopt, "409: object changed"},
      SuspendOutcome{Outcome::kDryRun, std::nullopt, "enforcement is off: nothing sent"},
      Leadership{"host-1/uuid", "acquired"},
      Forgotten{"deleted from the cluster"},
      Pruned{1, 40, 17, 1'800'000'000'000, 1'800'000'100'000, 39, std::string(64, 'a'),
             "journal-000000000001-000000000040.sqlite"},
      WriterStarted{"host-1/uuid", {}},
      WriterStarted{"host-1/uuid", {true, {}}},
      WriterStarted{"host-1/uuid", {false, {"team-a", "team-b"}}},
  };
  static_assert(std::variant_size_v<EventBody> == 9, "a new event kind needs a case here");
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

// A spare, and a sandbox whose fence two other policies widen (schema 9):
// both survive the full JSON form, under the field names the `events` view
// and audit scripts read.
TEST(Codec, SpareAndWideningPoliciesRoundTrip) {
  Snapshot snap = testing::HealthySnapshot();
  snap.sandbox.spare = true;
  snap.bypass = {{"allow-dns", "uid-allow-dns", 3, Widens::kEgress},
                 {"ssh", "uid-ssh", 1, Widens::kBoth}};
  const std::string text = EncodePayload(SandboxObserved{snap});
  auto decoded = DecodePayload(EventKind::kSandboxObserved, text);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_TRUE(std::get<SandboxObserved>(*decoded).snapshot == snap) << text;
  auto snapshot = DecodeSnapshot(EncodeSnapshot(snap));
  ASSERT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  EXPECT_TRUE(snapshot->sandbox.spare);
  EXPECT_EQ(snapshot->bypass, snap.bypass);

  const boost::json::value v = boost::json::parse(text);
  EXPECT_EQ(v.at("sandbox").at("spare"), true);
  EXPECT_EQ(v.at("bypass"), boost::json::parse(R"([
      {"policy":"allow-dns","uid":"uid-allow-dns","generation":3,"widens":"egress"},
      {"policy":"ssh","uid":"uid-ssh","generation":1,"widens":"both"}])"));
  // Neither: spare false and an empty list, spelled out.
  const boost::json::value none = boost::json::parse(EncodeSnapshot(testing::HealthySnapshot()));
  EXPECT_EQ(none.at("sandbox").at("spare"), false);
  EXPECT_EQ(none.at("bypass"), boost::json::array());
}

// A payload of schema 8 (no spare, no bypass) reads as not a spare, nothing
// widening the fence; a malformed list is corruption naming the field.
TEST(Codec, WideningPoliciesAbsentOrMalformed) {
  std::string old = EncodeSnapshot(testing::HealthySnapshot());
  const size_t spare = old.find(",\"spare\":false");
  ASSERT_NE(spare, std::string::npos) << old;
  old.erase(spare, std::string(",\"spare\":false").size());
  const size_t bypass = old.find(",\"bypass\":[]");
  ASSERT_NE(bypass, std::string::npos) << old;
  old.erase(bypass, std::string(",\"bypass\":[]").size());
  auto decoded = DecodeSnapshot(old);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString() << "\n" << old;
  EXPECT_TRUE(*decoded == testing::HealthySnapshot());

  const std::string good = EncodeSnapshot(testing::HealthySnapshot());
  const auto with = [&](const std::string& list) {
    std::string t = good;
    t.replace(t.find("\"bypass\":[]"), 11, "\"bypass\":" + list);
    return DecodeSnapshot(t);
  };
  ASSERT_TRUE(with(R"([{"policy":"p","uid":"u","generation":1,"widens":"ingress"}])").ok());
  for (const auto& [list, field] : std::vector<std::pair<std::string, std::string>>{
           {R"({"policy":"p"})", "snapshot: field 'bypass' is not an array"},
           {R"([["p","u",1,1]])", "snapshot.bypass[0]: not an object"},
           {R"([{"policy":"p","uid":"u","generation":1,"widens":"sideways"}])",
            "snapshot.bypass[0]: field 'widens' has unknown value 'sideways'"},
           {R"([{"policy":"p","uid":"u","widens":"egress"}])",
            "snapshot.bypass[0]: missing field 'generation'"}}) {
    auto bad = with(list);
    ASSERT_FALSE(bad.ok()) << list;
    EXPECT_EQ(bad.status().code(), Code::kCorruption);
    EXPECT_NE(bad.status().message().find(field), std::string::npos) << bad.status().message();
  }
  std::string spare_text = good;
  spare_text.replace(spare_text.find("\"spare\":false"), 13, "\"spare\":0");
  auto bad_spare = DecodeSnapshot(spare_text);
  ASSERT_FALSE(bad_spare.ok());
  EXPECT_NE(bad_spare.status().message().find("'spare' is not a boolean"), std::string::npos);
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
