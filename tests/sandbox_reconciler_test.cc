// SandboxReconciler, one failure at a time: each test is one observation of
// issue #8 reproduced (it failed before the protocol of docs/transitions.md)
// over the in-process API simulator, a FakeTransport that can lose answers,
// a cache the test fills, a real journal and a manual clock.
#include "reconciler/sandbox_reconciler.h"

#include <gtest/gtest.h>

#include "sandbox_reconciler_fixture.h"

namespace fk::reconciler {
namespace {

// An idle moment after the journal recorded something hands the freed memory
// back, once; an idle moment after nothing new does not (it would walk the
// heap after every event of a quiet cluster).
TEST_P(SandboxReconcilerTest, AnIdleMomentAfterRecordingReturnsFreedMemoryOnce) {
  reconciler_->Idle();
  EXPECT_EQ(memory_returned_, 0);  // a new journal: nothing recorded
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  ASSERT_EQ(Outcomes(), std::vector<std::string>{"applied"});
  SyncCache();  // the cache catches up: it shows the sandbox suspended
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  reconciler_->Idle();
  EXPECT_EQ(memory_returned_, 1);
  reconciler_->Idle();
  const size_t events = Events().size();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  ASSERT_EQ(Events().size(), events);  // nothing new to record
  reconciler_->Idle();
  EXPECT_EQ(memory_returned_, 1);
  ServerPatch(std::string(kSandboxes) + "/a",
              json::parse(R"({"spec":{"operatingMode":"Running"}})"));
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);  // suspended again
  reconciler_->Idle();
  EXPECT_EQ(memory_returned_, 2);
}

TEST_P(SandboxReconcilerTest, StaleRunningSandboxIsSuspendedOnceWithOneWarningAndEvent) {
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Mode("a"), "Suspended");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"applied"});
  EXPECT_EQ(reconciler_->stats().warnings, 1);
  EXPECT_EQ(events_.published.size(), 1u);
  // The cache still shows it running: the journal, not the cache, says it is done.
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 1);
}

// Two commits per transition: the intent (durable before the PATCH), then
// its outcome together with the sandbox as the PATCH returned it. The pass
// that sees the suspended sandbox in the cache then has nothing to record.
TEST_P(SandboxReconcilerTest, ATransitionIsTwoCommitsTheIntentThenItsOutcomeWithTheReturnedObject) {
  const uint64_t before = Commits();
  int commits_before_patch = -1;
  before_ = [&](const kube::HttpRequest& r) -> Reply {
    if (IsSandboxPatch(r)) commits_before_patch = static_cast<int>(Commits() - before);
    return std::nullopt;
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(commits_before_patch, 1) << "the intent is durable before the PATCH";
  EXPECT_EQ(Commits() - before, 2u);
  const std::vector<domain::Event> events = Events();
  ASSERT_GE(events.size(), 3u);
  const size_t outcome = events.size() - 3;
  EXPECT_TRUE(std::holds_alternative<domain::SuspendOutcome>(events[outcome].body));
  const auto* observed = std::get_if<domain::SandboxObserved>(&events[outcome + 1].body);
  ASSERT_NE(observed, nullptr) << "the returned object follows the outcome";
  EXPECT_FALSE(observed->snapshot.sandbox.should_run) << "as the PATCH left it: suspended";
  EXPECT_TRUE(std::holds_alternative<domain::Decided>(events[outcome + 2].body));
  SyncCache();  // the cache catches up with the suspended sandbox
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Commits() - before, 2u) << "nothing left for the next pass to record";
  // agent-sandbox deletes the suspended sandbox's pods: decide() reads no pod
  // of a suspended sandbox, so that is no change either.
  const json::value pods =
      json::parse(sim::HandleRequest(*sim_, {"GET", kPods, "", ""}, "sim").body);
  for (const json::value& pod : pods.at("items").as_array()) {
    const std::string name = kube::MetadataString(pod, "name");
    ASSERT_EQ(sim::HandleRequest(*sim_, {"DELETE", std::string(kPods) + "/" + name, "", ""}, "sim")
                  .status,
              200);
  }
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Commits() - before, 2u) << "the pods' deletion is no decision-relevant change";
  EXPECT_EQ(Events().size(), events.size());
  EXPECT_EQ(Sent("PATCH"), 1);
}

// Issue #8, observation 1: the PATCH lands, its answer is lost. Reading the
// sandbox finds our seq on it: applied — not failed, not re-sent.
TEST_P(SandboxReconcilerTest, LostAnswerToALandedPatchIsRecordedAppliedByReadingTheSandbox) {
  after_ = [this](const kube::HttpRequest& r, const kube::HttpResponse&) -> Reply {
    if (!IsSandboxPatch(r)) return std::nullopt;
    return Result<kube::HttpResponse>(Status::IOError("connection reset by peer"));
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 1);
  EXPECT_EQ(Sent("GET"), 1);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"applied"});
  EXPECT_EQ(reconciler_->stats().warnings, 1);
  EXPECT_EQ(events_.published.size(), 1u);
}

// Observation 1, after a crash: the intent was pending (nothing answered,
// nothing readable), and the delayed PATCH lands after the restart began.
TEST_P(SandboxReconcilerTest, PatchThatLandsAfterACrashIsAppliedAtStartUpNotFailed) {
  std::string lost_patch;
  before_ = [&](const kube::HttpRequest& r) -> Reply {
    if (IsSandboxPatch(r)) lost_patch = r.body;  // in flight: not applied yet
    if (IsSandboxPatch(r) || r.method == "GET")
      return Result<kube::HttpResponse>(Status::IOError("timeout"));
    return std::nullopt;
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"pending"});
  // The process dies; the PATCH it sent reaches the server now.
  before_ = nullptr;
  ServerPatch(std::string(kSandboxes) + "/a", json::parse(lost_patch));
  OpenJournal();
  Restart();
  const int patches = Sent("PATCH");
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), patches);  // confirmed by reading, nothing re-sent
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"applied"});
  EXPECT_EQ(reconciler_->stats().resolved_intents, 1);
  EXPECT_EQ(reconciler_->stats().warnings, 1);
}

// A 5xx before anything was applied: the read shows the same
// resourceVersion, so the identical conditional PATCH is sent again.
TEST_P(SandboxReconcilerTest, UnknownResultWithTheObjectUnchangedResendsTheIdenticalPatch) {
  std::vector<std::string> bodies;
  before_ = [&](const kube::HttpRequest& r) -> Reply {
    if (!IsSandboxPatch(r)) return std::nullopt;
    bodies.push_back(r.body);
    if (bodies.size() > 1) return std::nullopt;
    return Result<kube::HttpResponse>(kube::HttpResponse{503, R"({"kind":"Status","code":503})",
                                                         "application/json", std::nullopt});
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[0], bodies[1]);  // same seq, same precondition
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"applied"});
}

// Observation 2: the intent is confirmed after someone resumed the sandbox
// with the old fence. "Applied at" is the generation the intent observed, so
// the resume is a new episode and is suspended again.
TEST_P(SandboxReconcilerTest, ResumedBeforeTheIntentWasConfirmedIsSuspendedAgain) {
  before_ = [&](const kube::HttpRequest& r) -> Reply {
    if (r.method == "GET") return Result<kube::HttpResponse>(Status::IOError("timeout"));
    return std::nullopt;
  };
  after_ = [&](const kube::HttpRequest& r, const kube::HttpResponse&) -> Reply {
    if (IsSandboxPatch(r)) return Result<kube::HttpResponse>(Status::IOError("connection reset"));
    return std::nullopt;
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);  // landed, but nobody knows
  before_ = nullptr;
  after_ = nullptr;
  ServerPatch(std::string(kSandboxes) + "/a",
              json::parse(R"({"spec":{"operatingMode":"Running"}})"));
  OpenJournal();
  Restart();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Mode("a"), "Suspended");
  EXPECT_EQ(Outcomes(), (std::vector<std::string>{"applied", "applied"}));
}

// Observation 3: the journal refuses the outcome. The intent stays pending
// and is settled by reading as soon as writes succeed again — no restart.
TEST_P(SandboxReconcilerTest, OutcomeTheJournalRefusedIsSettledWhenItTakesWritesAgain) {
  after_ = [&](const kube::HttpRequest& r, const kube::HttpResponse&) -> Reply {
    if (IsSandboxPatch(r)) refuse_writes_ = true;  // the disk fills right after the PATCH
    return std::nullopt;
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"pending"});
  EXPECT_FALSE(reconciler_->JournalWritable());
  after_ = nullptr;
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next,
            Next::kRetry);  // still refused: still pending
  refuse_writes_ = false;
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"applied"});
  EXPECT_TRUE(reconciler_->JournalWritable());
  EXPECT_EQ(Sent("PATCH"), 1);
  EXPECT_EQ(reconciler_->stats().warnings, 1);
}

// Observation 4: OpenShell is creating "b": bootstrapping, phase preparing,
// Running, no fence annotations yet, the workload pod gated. Row 1a: leave
// it alone and look again when the 5-minute grace ends.
TEST_P(SandboxReconcilerTest, SandboxOpenShellIsAdmittingIsLeftAloneUntilTheGraceEnds) {
  const std::string started = std::to_string(time_.NowMs());
  sim::HandleRequest(
      *sim_,
      {"POST", kPods,
       R"({"metadata":{"name":"b","labels":{"openshell.ai/boundary-role":"workload"}},
                          "spec":{"schedulingGates":[{"name":"openshell.ai/admission"}],"containers":[{"name":"c","image":"i"}]}})",
       "application/json"},
      "sim");
  sim::HandleRequest(
      *sim_,
      {"POST", kSandboxes,
       R"({"metadata":{"name":"b","labels":{"openshell.ai/managed-by":"openshell","openshell.ai/sandbox-id":"b"},
           "annotations":{"openshell.ai/sandbox-runtime-bootstrapping":"true",
                          "openshell.ai/sandbox-runtime-bootstrap-operation":"create",
                          "openshell.ai/sandbox-runtime-bootstrap-phase":"preparing",
                          "openshell.ai/sandbox-runtime-bootstrap-started-at-ms":")" +
           started + R"("}},"spec":{"operatingMode":"Running"}})",
       "application/json"},
      "sim");
  SyncCache();
  const ReconcileResult r = reconciler_->Reconcile({"ns", "b"});
  EXPECT_EQ(r.next, Next::kAfter);
  EXPECT_EQ(r.after, 5min);
  EXPECT_EQ(Sent("PATCH"), 0);
  time_.Advance(5min);
  EXPECT_EQ(reconciler_->Reconcile({"ns", "b"}).next, Next::kDone);
  EXPECT_EQ(Mode("b"), "Suspended");  // OpenShell never finished: fail closed
}

// Observation 5: the sandbox cache is ahead of the pod cache. "c" records a
// new workload pod the pod cache has not seen; the live GET shows it, so
// nothing is journaled and nothing sent.
TEST_P(SandboxReconcilerTest, LaggingPodCacheNeverSuspendsAHealthySandbox) {
  // Make "a" healthy: admitted under generation 2 with a brand-new workload pod.
  sim::HandleRequest(*sim_, {"DELETE", std::string(kPods) + "/a", "", ""}, "sim");
  sim::ApiReply pod = sim::HandleRequest(
      *sim_,
      {"POST", kPods,
       R"({"metadata":{"name":"a","labels":{"openshell.ai/boundary-role":"workload"}}})",
       "application/json"},
      "sim");
  const std::string pod_uid = kube::MetadataString(json::parse(pod.body), "uid");
  SyncCache();
  ServerPatch(
      std::string(kSandboxes) + "/a",
      {{"metadata",
        {{"annotations",
          {{kube::kFenceGenerationAnnotation, "2"}, {kube::kWorkloadUidAnnotation, pod_uid}}}}}});
  cache_.Put(MapCache::Kind::kSandboxes, "ns", "a",
             std::make_shared<const json::value>(Server(kSandboxes, "a")));
  cache_.Put(MapCache::Kind::kPods, "ns", "a", nullptr);  // the pod cache lags behind
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  EXPECT_EQ(Sent("PATCH"), 0);
  EXPECT_EQ(Sent("GET", "/pods/a"), 1);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{});
  EXPECT_EQ(reconciler_->stats().unconfirmed, 1);
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Mode("a"), "Running");
}

// Observation 6: without a confirmed lease nothing is written — no intent, no PATCH.
TEST_P(SandboxReconcilerTest, NoIntentAndNoPatchWithoutTheLease) {
  may_write_ = false;
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  EXPECT_EQ(Sent("PATCH"), 0);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{});
  EXPECT_EQ(reconciler_->stats().fenced, 1);
  may_write_ = true;
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Mode("a"), "Suspended");
}

// A definite refusal is `failed` and retried later as a new intent; it is
// never confused with an unknown result.
TEST_P(SandboxReconcilerTest, DefiniteRefusalIsFailedAndNotReadBack) {
  before_ = [&](const kube::HttpRequest& r) -> Reply {
    if (!IsSandboxPatch(r)) return std::nullopt;
    return Result<kube::HttpResponse>(kube::HttpResponse{
        403, R"({"kind":"Status","code":403,"reason":"Forbidden","message":"denied by webhook"})",
        "application/json", std::nullopt});
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  EXPECT_EQ(Sent("GET"), 0);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"failed"});
  EXPECT_EQ(reconciler_->stats().warnings, 0);
}

// Issue 17, finding 1: run A suspended "a" with seq N; someone resumed it by
// hand (the annotations stay); run B starts on a fresh journal (a lost volume,
// a restored backup, the other replica's) and numbers its intent N too. B's
// PATCH is answered 503 and not applied: reading the object finds seq N, but
// A's writer id, so B's intent is not applied — the PATCH is sent again and
// the stale sandbox ends suspended.
TEST_P(SandboxReconcilerTest, AnotherJournalsSeqOnTheObjectIsNotTakenForOurs) {
  ASSERT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  const json::value suspended = Server(kSandboxes, "a");
  const std::string seq_a =
      kube::StringField(kube::ObjectField(kube::ObjectField(suspended, "metadata"), "annotations"),
                        kube::kSeqAnnotation)
          .value_or("");
  ServerPatch(std::string(kSandboxes) + "/a",
              json::parse(R"({"spec":{"operatingMode":"Running"}})"));
  LoseJournal();
  OpenJournal();
  Restart();
  int refused = 0;
  before_ = [&](const kube::HttpRequest& r) -> Reply {
    if (!IsSandboxPatch(r) || refused++ > 0) return std::nullopt;
    return Result<kube::HttpResponse>(kube::HttpResponse{503, R"({"kind":"Status","code":503})",
                                                         "application/json", std::nullopt});
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  const auto intents = Outcomes();
  ASSERT_EQ(intents.size(), 1u);
  EXPECT_EQ(intents[0], "applied");
  EXPECT_EQ(Sent("PATCH"), 2);  // the 503, then the identical PATCH that landed
  EXPECT_EQ(Mode("a"), "Suspended");
  // The seqs did collide (the reason the writer id exists).
  int64_t intent_seq = 0;
  for (const domain::Event& e : Events())
    if (std::holds_alternative<domain::SuspendIntent>(e.body)) intent_seq = e.seq;
  EXPECT_EQ(std::to_string(intent_seq), seq_a);
}

// Issue 17, finding 2: the first PATCH is refused (403, recorded failed); the
// identical resend lands, its answer is lost, and the process dies before it
// can read the sandbox back. The next process sees the sandbox carrying that
// intent: the journal agrees with the server — applied, one warning, one Event.
TEST_P(SandboxReconcilerTest, RefusedIntentWhoseResendLandedIsRecordedAppliedWhenSeen) {
  int patches = 0;
  before_ = [&](const kube::HttpRequest& r) -> Reply {
    if (IsSandboxPatch(r) && patches++ == 0)
      return Result<kube::HttpResponse>(kube::HttpResponse{
          403, R"({"kind":"Status","code":403,"reason":"Forbidden","message":"denied"})",
          "application/json", std::nullopt});
    if (r.method == "GET" && patches > 1)
      return Result<kube::HttpResponse>(Status::IOError("timeout"));
    return std::nullopt;
  };
  after_ = [&](const kube::HttpRequest& r, const kube::HttpResponse&) -> Reply {
    if (IsSandboxPatch(r)) return Result<kube::HttpResponse>(Status::IOError("connection reset"));
    return std::nullopt;
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"failed"});
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);  // resend landed, unread
  EXPECT_EQ(Mode("a"), "Suspended");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"failed"});
  before_ = nullptr;
  after_ = nullptr;
  OpenJournal();
  Restart();  // the cache now shows the suspended sandbox carrying the intent
  const int sent = Sent("PATCH");
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"applied"});
  EXPECT_EQ(Sent("PATCH"), sent);
  EXPECT_EQ(reconciler_->stats().warnings, 1);
  EXPECT_EQ(events_.published.size(), 1u);
  // Seen again, it costs nothing: no new row.
  const int64_t last = State().last_seq;
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(State().last_seq, last);
  EXPECT_EQ(events_.published.size(), 1u);
}

// Issue 17, finding 4: an evaluation that appends nothing commits nothing, so
// it must not turn a journal that refused the last write back to writable.
TEST_P(SandboxReconcilerTest, AnEvaluationThatAppendsNothingDoesNotMakeTheJournalWritable) {
  ASSERT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  SyncCache();
  ASSERT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);  // held: recorded once
  const std::string path = std::string(kSandboxes) + "/a";
  ServerPatch(
      path,
      json::parse(
          R"({"metadata":{"annotations":{"openshell.ai/sandbox-runtime-bootstrap-phase":"x"}}})"));
  SyncCache();
  refuse_writes_ = true;  // the disk is full
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  EXPECT_FALSE(reconciler_->JournalWritable());
  ServerPatch(
      path,
      json::parse(
          R"({"metadata":{"annotations":{"openshell.ai/sandbox-runtime-bootstrap-phase":null}}})"));
  SyncCache();  // back to what the journal holds: nothing to append
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_FALSE(reconciler_->JournalWritable());
  refuse_writes_ = false;
  ServerPatch(
      path,
      json::parse(
          R"({"metadata":{"annotations":{"openshell.ai/sandbox-runtime-bootstrap-phase":"y"}}})"));
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_TRUE(reconciler_->JournalWritable());  // a write that really committed
}

// Issue 17, finding 6: "a" is deleted and created again under the same name;
// the cache sees only the new one (one batch, or while fencekeeper was down).
// The old uid is confirmed gone by a live read and forgotten, not remembered
// (and re-enqueued at every start) forever.
TEST_P(SandboxReconcilerTest, ANameReusedUnderANewUidForgetsTheOldUid) {
  ASSERT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  json::value old = Server(kSandboxes, "a");
  const std::string old_uid = kube::MetadataString(old, "uid");
  ASSERT_TRUE(State().sandboxes.contains(old_uid));
  sim::HandleRequest(*sim_, {"DELETE", std::string(kSandboxes) + "/a", "", ""}, "sim");
  auto& meta = old.as_object()["metadata"].as_object();
  for (const char* k : {"uid", "resourceVersion", "generation", "creationTimestamp"}) meta.erase(k);
  old.as_object()["spec"].as_object()["operatingMode"] = "Suspended";
  sim::HandleRequest(*sim_, {"POST", kSandboxes, json::serialize(old), "application/json"}, "sim");
  OpenJournal();
  Restart();  // down while it happened; the cache lists only the new uid
  const std::string new_uid = kube::MetadataString(Server(kSandboxes, "a"), "uid");
  ASSERT_NE(new_uid, old_uid);
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_FALSE(State().sandboxes.contains(old_uid));
  EXPECT_TRUE(State().sandboxes.contains(new_uid));
  const auto by_name = domain::uids_named(State(), {"ns", "a"});
  ASSERT_FALSE(by_name.empty());
  EXPECT_EQ(by_name, std::vector<CompactString>{CompactString(new_uid)});
  // Once forgotten, the name costs no more live reads.
  const int gets = Sent("GET");
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("GET"), gets);
}

// Held sandboxes (docs/design.md#held-sandboxes): "stopped" was suspended by
// its user before the fence rolled, so fencekeeper holds it and tells
// `kubectl describe` why, once per hold episode; "a" it suspends itself.
constexpr const char* kHeldScenario = R"(
namespaces:
  - name: ns
    fence: {generation: 2}
    sandboxes:
      - {name: a, mode: Running, admittedFenceGeneration: 1}
      - {name: stopped, mode: Suspended, admittedFenceGeneration: 1}
)";

class HeldEventsTest : public SandboxReconcilerTest {
 protected:
  const char* Scenario() const override { return kHeldScenario; }
  std::vector<FailClosedEvent> Held() const {
    std::vector<FailClosedEvent> out;
    for (const auto& e : events_.published)
      if (e.kind == FailClosedEvent::Kind::kHeld) out.push_back(e);
    return out;
  }
  // OpenShell's resume under the current fence, reduced to its end state: the
  // sandbox's admission record names the fence as it is now.
  void ReadmitStopped() {
    const json::value fence = Server("/apis/networking.k8s.io/v1/namespaces/ns/networkpolicies",
                                     domain::kWorkloadPolicyName);
    json::object annotations;
    annotations[kube::kFenceGenerationAnnotation] =
        std::to_string(fence.at("metadata").at("generation").as_int64());
    ServerPatch(std::string(kSandboxes) + "/stopped",
                json::object{{"metadata", json::object{{"annotations", annotations}}}});
    SyncCache();
  }
  // The cache shows the workload fence at generation 1, the one "stopped" was
  // admitted under, as a lagging cache would: returns that copy.
  json::value ShowTheAdmittedFence() {
    json::value older = Server("/apis/networking.k8s.io/v1/namespaces/ns/networkpolicies",
                               domain::kWorkloadPolicyName);
    older.at("metadata").as_object()["generation"] = 1;
    cache_.Put(MapCache::Kind::kPolicies, "ns", domain::kWorkloadPolicyName,
               std::make_shared<const json::value>(older));
    return older;
  }
};

TEST_P(HeldEventsTest, AHeldSandboxGetsOneNormalEventPerHoldEpisodeNotAgainAfterARestart) {
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  ASSERT_EQ(Held().size(), 1u);
  const FailClosedEvent held = Held()[0];
  EXPECT_EQ(held.name, "stopped");
  EXPECT_EQ(held.reason, "fence-stale");
  EXPECT_NE(held.note.find("fence generation 1 -> 2"), std::string::npos) << held.note;
  EXPECT_GT(held.seq, 0);
  EXPECT_EQ(Sent("PATCH"), 0);
  // Later passes, and a new process on the same journal, add none.
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  OpenJournal();
  Restart();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  EXPECT_EQ(Held().size(), 1u);
  // The fence rolls again while it is held: a new decision row, the same episode.
  const int64_t rows = State().last_seq;
  sim::RollFence(*sim_, "ns");
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  EXPECT_GT(State().last_seq, rows);
  EXPECT_EQ(Held().size(), 1u);
  // Re-admitted under the current fence, then the fence rolls again: a new episode.
  ReadmitStopped();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  EXPECT_EQ(State().sandboxes.begin()->second.decision->verdict, domain::Verdict::kHealthy);
  EXPECT_EQ(Held().size(), 1u);
  sim::RollFence(*sim_, "ns");
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  EXPECT_EQ(Held().size(), 2u);
  EXPECT_EQ(Sent("PATCH"), 0);
}

// Seed 5296 of the I16 campaign: a cache that shows an older copy of the
// fence for a moment makes the held sandbox look healthy, then held again.
// The sandbox itself never changed: one episode, one Event.
TEST_P(HeldEventsTest, AHoldInterruptedByAStaleFenceReadIsStillOneEpisode) {
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  ASSERT_EQ(Held().size(), 1u);
  const json::value older = ShowTheAdmittedFence();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  std::string uid;
  for (const auto& [u, r] : State().sandboxes)
    if (r.name == "stopped") uid = u.str();
  ASSERT_EQ(State().sandboxes.at(fk::CompactString(uid)).decision->verdict,
            domain::Verdict::kHealthy);
  SyncCache();  // the cache catches up
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  EXPECT_EQ(State().sandboxes.at(fk::CompactString(uid)).decision->verdict, domain::Verdict::kHold);
  EXPECT_EQ(Held().size(), 1u);
  // The same after a restart in the middle: the hold is read back, and with it its sandbox.
  OpenJournal();
  Restart();
  cache_.Put(MapCache::Kind::kPolicies, "ns", domain::kWorkloadPolicyName,
             std::make_shared<const json::value>(older));
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  EXPECT_EQ(Held().size(), 1u);
}

// Seed 104838 of the simulation: the process restarts in the interlude, while
// the latest decision is the healthy one. What the hold's episode began with
// is read back from the journal, not forgotten.
TEST_P(HeldEventsTest, ARestartWhileAHoldLooksHealthyIsStillOneEpisode) {
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  ASSERT_EQ(Held().size(), 1u);
  ShowTheAdmittedFence();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  OpenJournal();
  Restart();
  SyncCache();  // the new process's cache shows the current fence
  EXPECT_EQ(reconciler_->Reconcile({"ns", "stopped"}).next, Next::kDone);
  std::vector<domain::Verdict> verdicts;
  for (const domain::Event& e : Events())
    if (const auto* d = std::get_if<domain::Decided>(&e.body))
      verdicts.push_back(d->decision.verdict);
  EXPECT_EQ(verdicts, (std::vector{domain::Verdict::kHold, domain::Verdict::kHealthy,
                                   domain::Verdict::kHold}));
  EXPECT_EQ(Held().size(), 1u);
}

TEST_P(HeldEventsTest, ASandboxFencekeeperSuspendedItselfGetsItsWarningEventAndNoHeldEvent) {
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Mode("a"), "Suspended");
  SyncCache();  // the cache now shows it suspended: the verdict becomes hold
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  std::string uid_a;
  for (const auto& [uid, r] : State().sandboxes)
    if (r.name == "a") uid_a = uid.str();
  ASSERT_EQ(State().sandboxes.at(fk::CompactString(uid_a)).decision->verdict,
            domain::Verdict::kHold);
  ASSERT_EQ(events_.published.size(), 1u);
  EXPECT_EQ(events_.published[0].kind, FailClosedEvent::Kind::kSuspended);
  EXPECT_TRUE(Held().empty());
}

// Audit before enforce (docs/design.md#audit-before-enforce).
class DryRunTest : public SandboxReconcilerTest {
 protected:
  void SetUp() override {
    SandboxReconcilerTest::SetUp();
    enforcement_.dry_run_namespaces = {"ns"};
    Restart();
  }
  std::vector<FailClosedEvent> Published(FailClosedEvent::Kind kind) const {
    std::vector<FailClosedEvent> out;
    for (const auto& e : events_.published)
      if (e.kind == kind) out.push_back(e);
    return out;
  }
};

TEST_P(DryRunTest, AStaleSandboxIsRecordedOnceWithItsOutcomeInOneCommitAndNothingIsSent) {
  const uint64_t commits = Commits();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 0);
  EXPECT_EQ(Mode("a"), "Running");
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"dry-run"});
  EXPECT_EQ(Commits(), commits + 1);  // observation, decision, intent and outcome: one commit
  const auto would = Published(FailClosedEvent::Kind::kWouldSuspend);
  ASSERT_EQ(would.size(), 1u);
  EXPECT_EQ(would[0].reason, "fence-stale");
  EXPECT_EQ(reconciler_->stats().dry_runs, 1);
  const std::string uid = State().sandboxes.begin()->first.str();
  EXPECT_EQ(State().sandboxes.at(fk::CompactString(uid)).history.dry_run_generation, 1);
  EXPECT_TRUE(State().pending_intents.empty());

  // Later passes, a restart, a second fence roll: the same episode.
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  OpenJournal();
  Restart();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  sim::RollFence(*sim_, "ns");
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"dry-run"});
  EXPECT_EQ(Published(FailClosedEvent::Kind::kWouldSuspend).size(), 1u);
  EXPECT_EQ(Sent("PATCH"), 0);
}

TEST_P(DryRunTest, OnceTheNamespaceEnforcesTheSandboxIsSuspendedExactlyOnce) {
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  ASSERT_EQ(Outcomes(), std::vector<std::string>{"dry-run"});
  enforcement_ = {};
  OpenJournal();
  Restart();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  SyncCache();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 1);  // by this process (Restart counts afresh)
  EXPECT_EQ(Mode("a"), "Suspended");
  EXPECT_EQ(Outcomes(), (std::vector<std::string>{"dry-run", "applied"}));
  EXPECT_EQ(Published(FailClosedEvent::Kind::kSuspended).size(), 1u);
  EXPECT_EQ(Published(FailClosedEvent::Kind::kWouldSuspend).size(), 1u);
  // And back in dry-run, the suspended sandbox is held, as in enforce.
  enforcement_.dry_run_everywhere = true;
  OpenJournal();
  Restart();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 0);
  EXPECT_EQ(Outcomes(), (std::vector<std::string>{"dry-run", "applied"}));
}

// Simulation seed 12873: an enforcing run journaled an intent whose PATCH
// never arrived (pending); the next run, with enforcement off there, read the
// sandbox unchanged and sent the PATCH again. Off means nothing is sent: the
// intent is settled superseded, the sandbox gets its dry-run record, and the
// run that enforces again suspends it once.
TEST_P(DryRunTest, APendingIntentOfAnEnforcingRunIsNotSentAgain) {
  enforcement_ = {};
  Restart();
  before_ = [&](const kube::HttpRequest& r) -> Reply {
    if (IsSandboxPatch(r) || r.method == "GET")
      return Result<kube::HttpResponse>(Status::IOError("timeout"));
    return std::nullopt;
  };
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kRetry);
  ASSERT_EQ(Outcomes(), std::vector<std::string>{"pending"});
  before_ = nullptr;  // nothing reached the server
  enforcement_.dry_run_namespaces = {"ns"};
  OpenJournal();
  Restart();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 0);
  EXPECT_EQ(Mode("a"), "Running");
  EXPECT_EQ(Outcomes(), (std::vector<std::string>{"superseded", "dry-run"}));
  EXPECT_EQ(Published(FailClosedEvent::Kind::kWouldSuspend).size(), 1u);
  enforcement_ = {};
  OpenJournal();
  Restart();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 1);
  EXPECT_EQ(Mode("a"), "Suspended");
  EXPECT_EQ(Outcomes(), (std::vector<std::string>{"superseded", "dry-run", "applied"}));
}

TEST_P(DryRunTest, AnotherNamespaceStillEnforces) {
  enforcement_.dry_run_namespaces = {"other"};
  Restart();
  EXPECT_EQ(reconciler_->Reconcile({"ns", "a"}).next, Next::kDone);
  EXPECT_EQ(Sent("PATCH"), 1);
  EXPECT_EQ(Outcomes(), std::vector<std::string>{"applied"});
}

INSTANTIATE_TEST_SUITE_P(Journals, DryRunTest,
                         ::testing::Values(JournalKind::kSqlite, JournalKind::kMemory), KindName);

INSTANTIATE_TEST_SUITE_P(Journals, SandboxReconcilerTest,
                         ::testing::Values(JournalKind::kSqlite, JournalKind::kMemory), KindName);
INSTANTIATE_TEST_SUITE_P(Journals, HeldEventsTest,
                         ::testing::Values(JournalKind::kSqlite, JournalKind::kMemory), KindName);

}  // namespace
}  // namespace fk::reconciler
