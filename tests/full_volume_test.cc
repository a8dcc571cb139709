// A full volume stops fail-closed transitions last (docs/retention.md#a-full-volume):
// a write that finds the volume full gives the reserve up and still lands;
// from then on an evaluation without an intent is shed (nothing appended)
// while intents and outcomes are recorded; a volume short of space sheds
// before it is full; when space returns the reserve is taken back.
#include <gtest/gtest.h>

#include <filesystem>

#include "domain/fold.h"
#include "fault_vfs.h"
#include "journal/journal.h"
#include "journal_fixture.h"
#include "test_support.h"

namespace fk::journal {
namespace {
using namespace fk::domain;

class FullVolumeTest : public ::testing::Test {
 protected:
  std::unique_ptr<Journal> Open(int64_t reserve) {
    OpenOptions o;
    o.vfs = vfs_.name();
    o.reserve_bytes = reserve;
    o.volume_space = [this] { return Result<VolumeSpace>(space_); };
    return fk::testing::OpenJournal(path_, &clock_, o);
  }
  Recorded Evaluate(Journal& j, const std::string& name, int64_t fence_generation) {
    Snapshot s = fk::testing::HealthySnapshot(name);
    s.sandbox.uid = "uid-" + name;
    s.workload_fence.generation = fence_generation;
    s.history = history_for(j.state(), s.sandbox.uid);
    auto r = j.Record(Evaluation{s, decide(s), "7"});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : Recorded{};
  }
  // The volume has no room but the reserve.
  void Fill() {
    vfs_.full_while_exists = path_ + ".reserve";
    space_ = {0, 1 << 30};
  }

  fk::testing::TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  fk::testing::FaultVfs vfs_;
  ManualTimeSource clock_;
  VolumeSpace space_{1 << 30, 1 << 30};
};

TEST_F(FullVolumeTest, WithoutAReserveAFullVolumeRefusesTheIntent) {
  // The observation of issue 18: fail-closed stops exactly when the volume fills.
  auto j = Open(0);
  Evaluate(*j, "a", 1);
  vfs_.fail_writes = SQLITE_FULL;
  Snapshot s = fk::testing::HealthySnapshot("stale");
  s.workload_fence.generation = 2;
  EXPECT_FALSE(j->Record(Evaluation{s, decide(s), "7"}).ok());
}

TEST_F(FullVolumeTest, TheReserveIsGivenUpAndIntentsAndOutcomesGoOn) {
  auto j = Open(1 << 20);
  ASSERT_TRUE(std::filesystem::exists(path_ + ".reserve"));
  EXPECT_EQ(std::filesystem::file_size(path_ + ".reserve"), 1u << 20);
  Evaluate(*j, "healthy", 1);
  Fill();
  const auto r = Evaluate(*j, "stale", 2);  // the write that finds the volume full
  ASSERT_TRUE(r.intent_seq);
  EXPECT_TRUE(j->shedding());
  EXPECT_FALSE(std::filesystem::exists(path_ + ".reserve"));
  ASSERT_TRUE(j->RecordOutcome(*r.intent_seq, {Outcome::kApplied, 3, ""}).ok());
  const int64_t last = j->state().last_seq;
  const auto shed = Evaluate(*j, "new-and-healthy", 1);  // no intent: shed
  EXPECT_TRUE(shed.shed);
  EXPECT_EQ(shed.appended, 0u);
  EXPECT_EQ(j->state().last_seq, last);
  EXPECT_TRUE(Evaluate(*j, "stale-2", 3).intent_seq);  // an intent still goes in
  EXPECT_TRUE(j->CheckSpace().shedding);               // still no room
  // Space returns: the reserve comes back, shedding stops, the shed row is recorded.
  vfs_.full_while_exists.clear();
  space_ = {64 << 20, 1 << 30};
  const SpaceStatus s = j->CheckSpace();
  EXPECT_TRUE(s.reserve_held);
  EXPECT_FALSE(s.shedding);
  EXPECT_TRUE(std::filesystem::exists(path_ + ".reserve"));
  EXPECT_GT(Evaluate(*j, "new-and-healthy", 1).appended, 0u);
}

TEST_F(FullVolumeTest, AVolumeShortOfSpaceShedsBeforeItIsFull) {
  auto j = Open(1 << 20);
  space_ = {(1 << 20) + 10, 1 << 30};  // less than twice the reserve
  EXPECT_TRUE(j->CheckSpace().shedding);
  EXPECT_TRUE(Evaluate(*j, "healthy", 1).shed);
  EXPECT_TRUE(Evaluate(*j, "stale", 2).intent_seq);
  space_ = {3 << 20, 1 << 30};
  EXPECT_FALSE(j->CheckSpace().shedding);
}

TEST_F(FullVolumeTest, AReserveThatCannotBeAllocatedShedsFromTheStart) {
  std::filesystem::create_directory(path_ + ".reserve");  // cannot be a file
  auto j = Open(1 << 20);
  EXPECT_TRUE(j->shedding());
  EXPECT_FALSE(j->CheckSpace().reserve_held);
}

TEST_F(FullVolumeTest, TheReserveGrowsWithTheSandboxesItMustCarry) {
  auto j = Open(256 << 10);
  EXPECT_EQ(std::filesystem::file_size(path_ + ".reserve"), 256u << 10);
  constexpr int kSandboxes = 500;
  for (int i = 0; i < kSandboxes; ++i) Evaluate(*j, "sb-" + std::to_string(i), 1);
  // Each may need an intent and an outcome while the volume is full.
  EXPECT_GE(std::filesystem::file_size(path_ + ".reserve"),
            static_cast<uintmax_t>(ReserveFor(space_, kSandboxes)));
  EXPECT_EQ(ReserveFor({0, 1 << 30}, 30000), kReserveWal + 30000 * kReservePerSandbox);
  EXPECT_EQ(ReserveFor({0, 16 << 20}, 30000), 4 << 20);  // at most a quarter of the volume
}

// A volume with no room but the reserve (modelled block by block by the
// VFS): 300 stale sandboxes each get an intent and an outcome in what the
// reserve gave back, because the WAL is checkpointed and written again
// from its start rather than grown.
TEST_F(FullVolumeTest, WithTheReserveGoneTheWalIsReusedNotGrown) {
  constexpr int kSandboxes = 300;
  vfs_.SetVolume(dir_.path().string(), 64 << 20);
  auto j = Open(256 << 10);
  for (int i = 0; i < kSandboxes; ++i) Evaluate(*j, "sb-" + std::to_string(i), 1);
  ASSERT_TRUE(j->Checkpoint().ok());
  vfs_.FillVolume();
  const auto full = vfs_.VolumeSpace();
  space_ = {full.free_bytes, full.size_bytes};
  int applied = 0;
  for (int i = 0; i < kSandboxes; ++i) {
    const auto r = Evaluate(*j, "sb-" + std::to_string(i), 2);
    if (!r.intent_seq) continue;
    applied += j->RecordOutcome(*r.intent_seq, {Outcome::kApplied, 3, ""}).ok();
  }
  EXPECT_EQ(applied, kSandboxes);
  EXPECT_GT(vfs_.full_writes(), 0);  // the reserve was needed, and given up
  EXPECT_FALSE(std::filesystem::exists(path_ + ".reserve"));
  EXPECT_LE(std::filesystem::file_size(path_ + "-wal"), static_cast<uintmax_t>(kReserveWal));
}

}  // namespace
}  // namespace fk::journal
