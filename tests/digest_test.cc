// domain/digest.h: what a live journal keeps of an observation must tell the
// same objects from different ones exactly as SameObjects() does, field by
// field, or the journal would skip a change or record a non-change.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "domain/digest.h"
#include "domain/plan.h"
#include "test_support.h"

namespace fk::domain {
namespace {

// One change to each field of a snapshot but its time.
std::vector<std::function<void(Snapshot&)>> EveryFieldChange() {
  return {
      [](Snapshot& s) { s.sandbox.ns += "x"; },
      [](Snapshot& s) { s.sandbox.name += "x"; },
      [](Snapshot& s) { s.sandbox.uid += "x"; },
      [](Snapshot& s) { ++s.sandbox.generation; },
      [](Snapshot& s) { s.sandbox.api_version = ApiVersion::kV1alpha1; },
      [](Snapshot& s) { s.sandbox.deleting = !s.sandbox.deleting; },
      [](Snapshot& s) { s.sandbox.should_run = !s.sandbox.should_run; },
      [](Snapshot& s) { s.sandbox.bootstrapping = !s.sandbox.bootstrapping; },
      [](Snapshot& s) { s.sandbox.bootstrap_op = BootstrapOp::kRestart; },
      [](Snapshot& s) { s.sandbox.bootstrap_phase += "x"; },
      [](Snapshot& s) { s.sandbox.bootstrap_started_at_ms = 7; },
      [](Snapshot& s) { s.sandbox.fence_uid.reset(); },
      [](Snapshot& s) { s.sandbox.fence_uid = *s.sandbox.fence_uid + "x"; },
      [](Snapshot& s) { s.sandbox.fence_generation = 9; },
      [](Snapshot& s) { s.sandbox.workload_uid.reset(); },
      [](Snapshot& s) { s.sandbox.supervisor_uid = "other"; },
      [](Snapshot& s) { s.workload_fence.present = !s.workload_fence.present; },
      [](Snapshot& s) { s.workload_fence.uid += "x"; },
      [](Snapshot& s) { ++s.workload_fence.generation; },
      [](Snapshot& s) { s.workload_fence.intact = !s.workload_fence.intact; },
      [](Snapshot& s) { s.supervisor_fence.uid += "x"; },
      [](Snapshot& s) { ++s.supervisor_fence.generation; },
      [](Snapshot& s) { s.workload_pod.present = !s.workload_pod.present; },
      [](Snapshot& s) { s.workload_pod.uid += "x"; },
      [](Snapshot& s) { s.workload_pod.scheduling_gated = !s.workload_pod.scheduling_gated; },
      [](Snapshot& s) { s.supervisor_pod.uid += "x"; },
      [](Snapshot& s) { s.history.pending_intent_seq = 4; },
      [](Snapshot& s) { s.history.applied_generation = 5; },
  };
}

TEST(ObservedDigest, DiffersExactlyWhereSameObjectsDoes) {
  const Snapshot base = testing::HealthySnapshot("a");
  const auto changes = EveryFieldChange();
  for (size_t i = 0; i < changes.size(); ++i) {
    Snapshot changed = base;
    changes[i](changed);
    ASSERT_FALSE(SameObjects(base, changed)) << "change " << i;
    EXPECT_NE(ObjectsDigest(base), ObjectsDigest(changed)) << "change " << i;
  }
  Snapshot later = base;
  later.observed_at_ms += 60'000;  // time alone is no change
  ASSERT_TRUE(SameObjects(base, later));
  EXPECT_EQ(ObjectsDigest(base), ObjectsDigest(later));
  EXPECT_EQ(DigestOf(base).objects, DigestOf(later).objects);
  EXPECT_EQ(DigestOf(base).sandbox, DigestOf(later).sandbox);
  EXPECT_NE(DigestOf(base), DigestOf(later));  // the record still says when
}

// decide() reads no pod of a suspended sandbox: agent-sandbox deleting them
// after a suspend is no change, so it records nothing. Resumed, they count.
TEST(ObservedDigest, PodsOfASuspendedSandboxAreNoChange) {
  Snapshot suspended = testing::HealthySnapshot("a");
  suspended.sandbox.should_run = false;
  Snapshot pods_gone = suspended;
  pods_gone.workload_pod = {};
  pods_gone.supervisor_pod = {};
  EXPECT_TRUE(SameObjects(suspended, pods_gone));
  EXPECT_EQ(ObjectsDigest(suspended), ObjectsDigest(pods_gone));
  Snapshot bootstrapping = suspended;
  bootstrapping.sandbox.bootstrapping = true;  // row 1a reads the workload pod
  Snapshot bootstrapping_gone = bootstrapping;
  bootstrapping_gone.workload_pod = {};
  EXPECT_FALSE(SameObjects(bootstrapping, bootstrapping_gone));
  EXPECT_NE(ObjectsDigest(bootstrapping), ObjectsDigest(bootstrapping_gone));
  Snapshot resumed = pods_gone;
  resumed.sandbox.should_run = true;
  Snapshot resumed_with_pods = resumed;
  resumed_with_pods.workload_pod = suspended.workload_pod;
  EXPECT_FALSE(SameObjects(resumed, resumed_with_pods));
  EXPECT_NE(ObjectsDigest(resumed), ObjectsDigest(resumed_with_pods));
}

TEST(ObservedDigest, SandboxDigestFollowsTheSandboxObjectAlone) {
  const Snapshot base = testing::HealthySnapshot("a");
  Snapshot other_fence = base;
  ++other_fence.workload_fence.generation;
  EXPECT_EQ(SandboxDigest(base.sandbox), SandboxDigest(other_fence.sandbox));
  Snapshot resumed = base;
  ++resumed.sandbox.generation;
  EXPECT_NE(SandboxDigest(base.sandbox), SandboxDigest(resumed.sandbox));
  // The fence generations the log lines name are kept as they are.
  const ObservedDigest d = DigestOf(base);
  EXPECT_EQ(d.fence_from(), base.sandbox.fence_generation);
  EXPECT_EQ(d.fence_to(), base.workload_fence.generation);
  Snapshot no_fence = base;
  no_fence.workload_fence = {};
  EXPECT_EQ(DigestOf(no_fence).fence_to(), std::nullopt);
}

}  // namespace
}  // namespace fk::domain
