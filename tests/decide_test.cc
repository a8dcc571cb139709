// decide(): every row of the decision table (docs/design.md#decision-table),
// every reason, bootstrap handling, missing annotations, and the journal-derived intent rule.
#include <gtest/gtest.h>

#include "domain/decision.h"
#include "test_support.h"

namespace fk::domain {
namespace {

using testing::HealthySnapshot;
using testing::StaleSnapshot;

void ExpectDecision(const Snapshot& s, Verdict verdict, Reason reason, Action action) {
  const Decision d = decide(s);
  EXPECT_EQ(ToString(d.verdict), std::string(ToString(verdict))) << d.note;
  EXPECT_EQ(ToString(d.reason), std::string(ToString(reason))) << d.note;
  EXPECT_EQ(ToString(d.action), std::string(ToString(action))) << d.note;
}

Snapshot Suspended(Snapshot s) {
  s.sandbox.should_run = false;
  s.workload_pod = {};  // agent-sandbox removes the pod of a suspended sandbox
  return s;
}

// Row 6.
TEST(Decide, RunningSandboxUnderCurrentFenceIsHealthy) {
  ExpectDecision(HealthySnapshot(), Verdict::kHealthy, Reason::kNone, Action::kNone);
}

TEST(Decide, SuspendedSandboxUnderCurrentFenceIsHealthyEvenWithoutPods) {
  Snapshot s = Suspended(HealthySnapshot());
  s.supervisor_pod = {};
  ExpectDecision(s, Verdict::kHealthy, Reason::kNone, Action::kNone);
}

// Row 1 wins over everything.
TEST(Decide, DeletedSandboxIsIgnoredEvenWhenStale) {
  Snapshot s = StaleSnapshot();
  s.sandbox.deleting = true;
  s.workload_fence = {};
  ExpectDecision(s, Verdict::kIgnore, Reason::kNone, Action::kNone);
}

// Row 2, each reason.
TEST(Decide, RunningSandboxBehindNewFenceGenerationIsSuspended) {
  const Decision d = decide(StaleSnapshot());
  EXPECT_EQ(d.verdict, Verdict::kSuspend);
  EXPECT_EQ(d.reason, Reason::kFenceStale);
  EXPECT_EQ(d.action, Action::kPatchSuspend);
  EXPECT_NE(d.note.view().find("fence generation 1 -> 2"), std::string::npos) << d.note;
}

TEST(Decide, RecreatedFenceWithNewUidIsStale) {
  Snapshot s = HealthySnapshot();
  s.workload_fence.uid = "fence-uid-2";  // same generation 1, new object
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
}

TEST(Decide, MissingFenceAnnotationsAreAMismatch) {
  Snapshot no_uid = HealthySnapshot();
  no_uid.sandbox.fence_uid.reset();
  ExpectDecision(no_uid, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
  Snapshot no_generation = HealthySnapshot();
  no_generation.sandbox.fence_generation.reset();  // missing or unparsable
  ExpectDecision(no_generation, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
}

TEST(Decide, AbsentWorkloadPolicyIsFenceMissing) {
  Snapshot workload = HealthySnapshot();
  workload.workload_fence = {};
  ExpectDecision(workload, Verdict::kSuspend, Reason::kFenceMissing, Action::kPatchSuspend);
}

TEST(Decide, WorkloadPolicyNotIntactIsFenceAltered) {
  Snapshot workload = HealthySnapshot();
  workload.workload_fence.intact = false;
  ExpectDecision(workload, Verdict::kSuspend, Reason::kFenceAltered, Action::kPatchSuspend);
}

// The supervisor policy only allows supervisor egress; OpenShell re-creates
// it and suspends nobody for it (docs/design.md#the-supervisor-policy).
TEST(Decide, AMissingOrAlteredSupervisorPolicySuspendsNobody) {
  Snapshot missing = HealthySnapshot();
  missing.supervisor_fence = {};
  ExpectDecision(missing, Verdict::kHealthy, Reason::kNone, Action::kNone);
  Snapshot altered = HealthySnapshot();
  altered.supervisor_fence.intact = false;
  ExpectDecision(altered, Verdict::kHealthy, Reason::kNone, Action::kNone);
  // ...and changes no other reason: a stale fence is still stale.
  Snapshot stale = StaleSnapshot();
  stale.supervisor_fence = {};
  ExpectDecision(stale, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
}

TEST(Decide, ReasonPrecedenceIsMissingThenAlteredThenBypassedThenStale) {
  Snapshot s = StaleSnapshot();
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
  s.bypass = {{"allow-dns", "p-9", 1, Widens::kEgress}};
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceBypassed, Action::kPatchSuspend);
  s.workload_fence.intact = false;
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceAltered, Action::kPatchSuspend);
  s.workload_fence = {};
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceMissing, Action::kPatchSuspend);
}

// The effective fence: another policy that widens what the workload may
// reach breaks the fence although the fence itself is untouched.
TEST(Decide, ABypassedFenceSuspendsARunningSandboxAndNamesEachPolicy) {
  Snapshot s = HealthySnapshot();
  s.bypass = {{"allow-dns", "p-9", 1, Widens::kEgress}, {"ssh", "p-8", 3, Widens::kBoth}};
  const Decision d = decide(s);
  EXPECT_EQ(d.verdict, Verdict::kSuspend);
  EXPECT_EQ(d.reason, Reason::kFenceBypassed);
  EXPECT_EQ(d.action, Action::kPatchSuspend);
  EXPECT_NE(
      d.note.view().find("NetworkPolicy allow-dns widens egress; NetworkPolicy ssh widens egress "
                         "and ingress"),
      std::string::npos)
      << d.note;
  EXPECT_STREQ(ToString(Reason::kFenceBypassed), "fence-bypassed");
}

TEST(Decide, ABypassedFenceHoldsASuspendedSandbox) {
  Snapshot s = Suspended(HealthySnapshot());
  s.bypass = {{"allow-dns", "p-9", 1, Widens::kEgress}};
  ExpectDecision(s, Verdict::kHold, Reason::kFenceBypassed, Action::kNone);
}

// Row 1b: a spare is OpenShell's to prepare and retire, even behind a stale
// or bypassed fence.
TEST(Decide, ASpareIsIgnoredWhateverItsFence) {
  Snapshot s = StaleSnapshot();
  s.sandbox.spare = true;
  s.sandbox.bootstrapping = true;
  s.sandbox.bootstrap_op = BootstrapOp::kCreate;
  s.sandbox.bootstrap_phase = "released";
  s.bypass = {{"allow-dns", "p-9", 1, Widens::kEgress}};
  ExpectDecision(s, Verdict::kIgnore, Reason::kNone, Action::kNone);
  s.workload_fence = {};
  ExpectDecision(s, Verdict::kIgnore, Reason::kNone, Action::kNone);
}

// Rows 3 and 4.
TEST(Decide, WorkloadPodMissingOrReplacedIsWorkloadGenerationChanged) {
  Snapshot missing = HealthySnapshot();
  missing.workload_pod = {};
  ExpectDecision(missing, Verdict::kSuspend, Reason::kWorkloadGenerationChanged,
                 Action::kPatchSuspend);
  Snapshot replaced = HealthySnapshot();
  replaced.workload_pod.uid = "pod-new";
  ExpectDecision(replaced, Verdict::kSuspend, Reason::kWorkloadGenerationChanged,
                 Action::kPatchSuspend);
  Snapshot unrecorded = HealthySnapshot();
  unrecorded.sandbox.workload_uid.reset();
  ExpectDecision(unrecorded, Verdict::kSuspend, Reason::kWorkloadGenerationChanged,
                 Action::kPatchSuspend);
}

TEST(Decide, SupervisorPodMissingOrReplacedIsSupervisorGenerationChanged) {
  Snapshot missing = HealthySnapshot();
  missing.supervisor_pod = {};
  ExpectDecision(missing, Verdict::kSuspend, Reason::kSupervisorGenerationChanged,
                 Action::kPatchSuspend);
  Snapshot replaced = HealthySnapshot();
  replaced.supervisor_pod.uid = "sup-new";
  ExpectDecision(replaced, Verdict::kSuspend, Reason::kSupervisorGenerationChanged,
                 Action::kPatchSuspend);
  Snapshot unrecorded = HealthySnapshot();
  unrecorded.sandbox.supervisor_uid.reset();
  ExpectDecision(unrecorded, Verdict::kSuspend, Reason::kSupervisorGenerationChanged,
                 Action::kPatchSuspend);
}

TEST(Decide, FenceProblemWinsOverPodProblems) {
  Snapshot s = StaleSnapshot();
  s.workload_pod = {};
  s.supervisor_pod = {};
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
}

TEST(Decide, WorkloadCheckComesBeforeSupervisorCheck) {
  Snapshot s = HealthySnapshot();
  s.workload_pod = {};
  s.supervisor_pod = {};
  ExpectDecision(s, Verdict::kSuspend, Reason::kWorkloadGenerationChanged, Action::kPatchSuspend);
}

// Row 5: the fix for OpenShell #3525.
TEST(Decide, SuspendedSandboxBehindStaleFenceIsHeldWithoutPatch) {
  const Decision d = decide(Suspended(StaleSnapshot()));
  EXPECT_EQ(d.verdict, Verdict::kHold);
  EXPECT_EQ(d.reason, Reason::kFenceStale);
  EXPECT_EQ(d.action, Action::kNone);
}

TEST(Decide, SuspendedSandboxBehindMissingOrAlteredFenceIsHeld) {
  Snapshot missing = Suspended(HealthySnapshot());
  missing.workload_fence = {};
  ExpectDecision(missing, Verdict::kHold, Reason::kFenceMissing, Action::kNone);
  Snapshot altered = Suspended(HealthySnapshot());
  altered.workload_fence.intact = false;
  ExpectDecision(altered, Verdict::kHold, Reason::kFenceAltered, Action::kNone);
}

// Bootstrap.
TEST(Decide, CreateOrRestartBootstrapMayRunSoAStaleFenceSuspends) {
  for (BootstrapOp op : {BootstrapOp::kCreate, BootstrapOp::kRestart}) {
    Snapshot s = Suspended(StaleSnapshot());
    s.sandbox.bootstrapping = true;
    s.sandbox.bootstrap_op = op;
    ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
  }
}

TEST(Decide, StopOrUnknownBootstrapOfSuspendedSandboxIsHeld) {
  for (BootstrapOp op : {BootstrapOp::kStop, BootstrapOp::kOther, BootstrapOp::kNone}) {
    Snapshot s = Suspended(StaleSnapshot());
    s.sandbox.bootstrapping = true;
    s.sandbox.bootstrap_op = op;
    ExpectDecision(s, Verdict::kHold, Reason::kFenceStale, Action::kNone);
  }
}

TEST(Decide, BootstrapOperationWithoutBootstrappingFlagDoesNotLetItRun) {
  Snapshot s = Suspended(StaleSnapshot());
  s.sandbox.bootstrap_op = BootstrapOp::kCreate;  // bootstrapping annotation not "true"
  ExpectDecision(s, Verdict::kHold, Reason::kFenceStale, Action::kNone);
}

TEST(Decide, BootstrappingSandboxSkipsPodGenerationChecks) {
  Snapshot s = HealthySnapshot();
  s.sandbox.bootstrapping = true;
  s.sandbox.bootstrap_op = BootstrapOp::kCreate;
  s.workload_pod = {};
  s.supervisor_pod = {};
  ExpectDecision(s, Verdict::kHealthy, Reason::kNone, Action::kNone);
}

// Row 1a: admitting. The base case is a create in progress whose sandbox,
// without row 1a, would be suspended for a stale fence (rows 2-6 as before):
// every test that breaks one condition expects exactly that suspend.
constexpr int64_t kNowMs = 1'800'000'000'000;

Snapshot Admitting(Snapshot s = StaleSnapshot()) {
  s.sandbox.bootstrapping = true;
  s.sandbox.bootstrap_op = BootstrapOp::kCreate;
  s.sandbox.bootstrap_phase = "preparing";
  s.sandbox.bootstrap_started_at_ms = kNowMs - 12'000;
  s.workload_pod.scheduling_gated = true;
  s.observed_at_ms = kNowMs;
  return s;
}

void ExpectNotAdmitting(const Snapshot& s) {
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
  EXPECT_EQ(decide(s).reevaluate_at_ms, std::nullopt);
}

TEST(DecideAdmitting, GatedCreateInPreparingWaitsUntilTheGraceEnds) {
  const Decision d = decide(Admitting());
  EXPECT_EQ(d.verdict, Verdict::kAdmitting);
  EXPECT_EQ(d.reason, Reason::kNone);
  EXPECT_EQ(d.action, Action::kNone);
  EXPECT_EQ(d.reevaluate_at_ms, kNowMs - 12'000 + kBootstrapGraceMs);
  EXPECT_EQ(kBootstrapGraceMs, 300'000);
  EXPECT_NE(d.note.view().find("admitting the sandbox (create, phase preparing, started 12 s ago"),
            std::string::npos)
      << d.note;
  EXPECT_NE(d.note.view().find("re-evaluate at " + std::to_string(kNowMs + 288'000)),
            std::string::npos)
      << d.note;
}

TEST(DecideAdmitting, RestartBehindTheOldFenceAndCreateWithoutAnnotationsAdmit) {
  // Resume after a fail-closed suspension: the annotations name the old fence.
  Snapshot restart = Admitting();
  restart.sandbox.bootstrap_op = BootstrapOp::kRestart;
  ExpectDecision(restart, Verdict::kAdmitting, Reason::kNone, Action::kNone);
  Snapshot create = Admitting(HealthySnapshot());  // create: no fence annotations written yet
  create.sandbox.fence_uid.reset();
  create.sandbox.fence_generation.reset();
  create.sandbox.workload_uid.reset();
  ExpectDecision(create, Verdict::kAdmitting, Reason::kNone, Action::kNone);
  Snapshot posted_suspended = Admitting();  // create step 2: the CR is POSTed suspended
  posted_suspended.sandbox.should_run = false;
  ExpectDecision(posted_suspended, Verdict::kAdmitting, Reason::kNone, Action::kNone);
}

TEST(DecideAdmitting, NeedsTheBootstrappingFlag) {
  Snapshot s = Admitting();
  s.sandbox.bootstrapping = false;
  ExpectNotAdmitting(s);
}

TEST(DecideAdmitting, NeedsCreateOrRestart) {
  for (BootstrapOp op : {BootstrapOp::kStop, BootstrapOp::kOther, BootstrapOp::kNone}) {
    Snapshot s = Admitting();
    s.sandbox.bootstrap_op = op;
    ExpectNotAdmitting(s);
  }
}

TEST(DecideAdmitting, NeedsPhasePreparingExactly) {
  for (const char* phase : {"released", "releasing", "suspending", "", "Preparing", "preparing "}) {
    Snapshot s = Admitting();
    s.sandbox.bootstrap_phase = phase;
    ExpectNotAdmitting(s);
  }
}

TEST(DecideAdmitting, NeedsAParsedStartTime) {
  Snapshot s = Admitting();
  s.sandbox.bootstrap_started_at_ms.reset();  // missing or unparsable
  ExpectNotAdmitting(s);
}

TEST(DecideAdmitting, GraceIsStrictlyLessThanFiveMinutesAfterTheStart) {
  Snapshot last = Admitting();
  last.sandbox.bootstrap_started_at_ms = kNowMs - kBootstrapGraceMs + 1;
  ExpectDecision(last, Verdict::kAdmitting, Reason::kNone, Action::kNone);
  EXPECT_EQ(decide(last).reevaluate_at_ms, kNowMs + 1);
  Snapshot ended = Admitting();
  ended.sandbox.bootstrap_started_at_ms = kNowMs - kBootstrapGraceMs;
  ExpectNotAdmitting(ended);
  Snapshot long_ago = Admitting();
  long_ago.sandbox.bootstrap_started_at_ms = 0;
  ExpectNotAdmitting(long_ago);
}

TEST(DecideAdmitting, StartInTheFutureIsBoundedToo) {
  Snapshot skewed = Admitting();  // a clock a little ahead of ours
  skewed.sandbox.bootstrap_started_at_ms = kNowMs + kBootstrapGraceMs - 1;
  ExpectDecision(skewed, Verdict::kAdmitting, Reason::kNone, Action::kNone);
  EXPECT_EQ(decide(skewed).reevaluate_at_ms, kNowMs + 2 * kBootstrapGraceMs - 1);
  EXPECT_NE(decide(skewed).note.view().find("starts 299 s after the observation"),
            std::string::npos)
      << decide(skewed).note;
  Snapshot ahead = Admitting();
  ahead.sandbox.bootstrap_started_at_ms = kNowMs + kBootstrapGraceMs;
  ExpectNotAdmitting(ahead);
  Snapshot far = Admitting();
  far.sandbox.bootstrap_started_at_ms = INT64_MAX;
  ExpectNotAdmitting(far);
}

TEST(DecideAdmitting, ObservationWithoutATimeNeverAdmits) {
  Snapshot s = Admitting();
  s.observed_at_ms = 0;  // a caller that does not set the time gets rows 2-6
  ExpectNotAdmitting(s);
}

TEST(DecideAdmitting, WorkloadPodMustBeAbsentOrGated) {
  Snapshot absent = Admitting();
  absent.workload_pod = {};
  ExpectDecision(absent, Verdict::kAdmitting, Reason::kNone, Action::kNone);
  EXPECT_NE(decide(absent).note.view().find("workload pod absent"), std::string::npos)
      << decide(absent).note;
  Snapshot ungated = Admitting();
  ungated.workload_pod.scheduling_gated = false;  // the workload can run: the fence must be right
  ExpectNotAdmitting(ungated);
  Snapshot only_supervisor_gated = ungated;
  only_supervisor_gated.supervisor_pod.scheduling_gated = true;
  ExpectNotAdmitting(only_supervisor_gated);
}

TEST(DecideAdmitting, DeletingWinsOverAdmitting) {
  Snapshot s = Admitting();
  s.sandbox.deleting = true;
  ExpectDecision(s, Verdict::kIgnore, Reason::kNone, Action::kNone);
  EXPECT_EQ(decide(s).reevaluate_at_ms, std::nullopt);
}

TEST(DecideAdmitting, AdmittingWinsOverFenceProblems) {
  ExpectDecision(Admitting(), Verdict::kAdmitting, Reason::kNone, Action::kNone);  // stale
  Snapshot missing = Admitting();
  missing.workload_fence = {};
  ExpectDecision(missing, Verdict::kAdmitting, Reason::kNone, Action::kNone);
  Snapshot altered = Admitting();
  altered.supervisor_fence.intact = false;
  ExpectDecision(altered, Verdict::kAdmitting, Reason::kNone, Action::kNone);
}

TEST(DecideAdmitting, VerdictNameIsStable) {
  EXPECT_STREQ(ToString(Verdict::kAdmitting), "admitting");
  EXPECT_EQ(ParseVerdict("admitting"), Verdict::kAdmitting);
}

// The intent rule.
TEST(DecideIntentRule, PendingSuspendMeansNoSecondPatch) {
  Snapshot s = StaleSnapshot();
  s.history.pending_intent_seq = 17;
  const Decision d = decide(s);
  EXPECT_EQ(d.verdict, Verdict::kSuspend);
  EXPECT_EQ(d.action, Action::kNone);
  EXPECT_NE(d.note.view().find("pending (journal seq 17)"), std::string::npos) << d.note;
}

TEST(DecideIntentRule, StaleReadOlderThanAppliedSuspendMeansNothing) {
  Snapshot s = StaleSnapshot();  // still Running at generation 2 in a lagging cache
  s.history.applied_generation = 3;
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kNone);
}

TEST(DecideIntentRule, ReadAtAppliedGenerationMeansNothing) {
  Snapshot s = StaleSnapshot();
  s.sandbox.generation = 3;
  s.history.applied_generation = 3;
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kNone);
}

TEST(DecideIntentRule, ResumedAtNewerGenerationAndStaleIsANewEpisode) {
  Snapshot s = StaleSnapshot();
  s.sandbox.generation = 4;  // someone set it Running again after our suspend at 3
  s.history.applied_generation = 3;
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
}

TEST(DecideIntentRule, ResumedUnderCurrentFenceIsHealthy) {
  Snapshot s = HealthySnapshot();
  s.sandbox.generation = 4;
  s.history.applied_generation = 3;
  ExpectDecision(s, Verdict::kHealthy, Reason::kNone, Action::kNone);
}

TEST(DecideIntentRule, HistoryDoesNotChangeHoldOrHealthy) {
  Snapshot held = Suspended(StaleSnapshot());
  held.history.pending_intent_seq = 5;
  ExpectDecision(held, Verdict::kHold, Reason::kFenceStale, Action::kNone);
}

TEST(Decide, IsDeterministic) {
  const Snapshot s = StaleSnapshot();
  EXPECT_EQ(decide(s), decide(s));
}

// Audit before enforce (docs/design.md#audit-before-enforce): where
// enforcement is off, a suspend verdict records a dry-run intent once per
// episode, under the same journal-derived rule as a PATCH.
TEST(Decide, InDryRunAStaleSandboxIsRecordedOncePerEpisodeAndNeverPatched) {
  Snapshot s = StaleSnapshot();
  s.dry_run = true;
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kRecordDryRun);
  EXPECT_NE(decide(s).note.view().find("would suspend (dry run)"), std::string::npos)
      << decide(s).note;
  s.history.dry_run_generation = s.sandbox.generation;  // recorded: the episode is covered
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kNone);
  s.workload_fence.generation = 3;  // the fence rolls again: still the same episode
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kNone);
  s.sandbox.generation += 1;  // resumed or edited: a new episode
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kRecordDryRun);
}

TEST(Decide, ADryRunIntentNeverCoversARealOne) {
  Snapshot s = StaleSnapshot();
  s.history.dry_run_generation = s.sandbox.generation + 5;
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kPatchSuspend);
}

TEST(Decide, InDryRunARealSuspendStillCoversTheEpisode) {
  Snapshot s = StaleSnapshot();
  s.dry_run = true;
  s.history.pending_intent_seq = 7;  // enforced before, its PATCH not settled
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kNone);
  s.history.pending_intent_seq.reset();
  s.history.applied_generation = s.sandbox.generation;
  ExpectDecision(s, Verdict::kSuspend, Reason::kFenceStale, Action::kNone);
}

TEST(Decide, DryRunChangesNoVerdictButASuspension) {
  for (Snapshot s : {HealthySnapshot(), Suspended(StaleSnapshot()), Suspended(HealthySnapshot())}) {
    Snapshot dry = s;
    dry.dry_run = true;
    EXPECT_EQ(decide(dry), decide(s)) << decide(s).note;
  }
}

}  // namespace
}  // namespace fk::domain
