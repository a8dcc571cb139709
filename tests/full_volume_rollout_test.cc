// A full volume in the middle of a rollout (docs/retention.md#a-full-volume):
// 200 running sandboxes go stale, and right after the first 20 PATCHes
// another writer takes every free byte of the journal's 16 MiB volume. Every
// sandbox is still suspended while the volume stays full, every PATCH
// carries the seq of an intent in the journal, and once space returns no
// intent is left pending. Once through the fault-injecting VFS (a volume
// modelled block by block) and once on a real tmpfs when the test may mount
// one.
#include <gtest/gtest.h>
#include <sys/mount.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "controller_instance.h"
#include "fault_vfs.h"
#include "journal/journal.h"
#include "journal/space.h"
#include "kube/json_fields.h"
#include "kube/objects.h"
#include "sim/simulator.h"
#include "sim/store.h"
#include "sim_fixture.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
using namespace std::chrono_literals;
using fk::testing::Eventually;

constexpr int kSandboxes = 200;
constexpr int kPatchesBeforeFull = 20;
constexpr int64_t kVolumeBytes = 16 << 20;

const sim::ResourceKind& Sandboxes() { return *sim::FindKind("agents.x-k8s.io", "sandboxes"); }

class FullVolumeRollout : public testing::SimFixture {
 protected:
  void SetUp() override {
    StartSimFromYaml(
        "options: {bookmarkInterval: 50ms}\n"
        "namespaces:\n"
        "  - name: agents\n"
        "    fence: {boundaryPort: 5500}\n"
        "    generate: {count: " +
        std::to_string(kSandboxes) + ", prefix: sb-}\n");
  }

  // Starts a controller on the journal at `path`, waits until every sandbox
  // is journaled, rolls the fence and calls `fill` at the first journal
  // write after PATCH 20 (the outcome of that PATCH finds the volume full).
  std::unique_ptr<testing::ControllerInstance> Rollout(const std::string& path,
                                                       journal::OpenOptions options,
                                                       std::function<void()> fill) {
    path_ = path;
    options.refuse_writes = [this, fill = std::move(fill)] {
      if (!filled_ && sim_->RequestCount("patch", "sandboxes") >= kPatchesBeforeFull) {
        fill();
        filled_ = true;
      }
      return false;
    };
    auto in = testing::StartControllerInstance(server_->url(), path, options);
    if (!in) return in;
    EXPECT_TRUE(Eventually([&] {
      return in->journal->Read([](const domain::JournalState& s) { return s.sandboxes.size(); }) ==
             static_cast<size_t>(kSandboxes);
    }));
    EXPECT_TRUE(Eventually([&] { return in->journal->Checkpoint().ok(); }));
    reserve_bytes_ = static_cast<int64_t>(std::filesystem::file_size(path + ".reserve"));
    RollFence("agents");
    return in;
  }
  int Suspended() {
    int n = 0;
    for (const auto& o : sim_->store().List(Sandboxes(), "agents", {}, {}).items)
      n += o.at("spec").at("operatingMode").as_string() == "Suspended";
    return n;
  }
  int64_t Count(const std::string& sql) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    return db.execAndGet(sql).getInt64();
  }
  // Every suspended sandbox names, in its seq annotation, an intent of the
  // journal for that very sandbox.
  void ExpectEveryPatchAnIntent() {
    std::map<int64_t, std::string> intents;  // seq -> sandbox
    {
      SQLite::Database db(path_, SQLite::OPEN_READONLY);
      SQLite::Statement q(db, "SELECT seq, sandbox FROM transitions");
      while (q.executeStep()) intents[q.getColumn(0).getInt64()] = q.getColumn(1).getString();
    }
    int checked = 0;
    for (const auto& o : sim_->store().List(Sandboxes(), "agents", {}, {}).items) {
      const auto& meta = o.at("metadata").as_object();
      const std::string name(meta.at("name").as_string());
      const auto* annotations = meta.if_contains("annotations");
      const auto* seq =
          annotations ? annotations->as_object().if_contains(kube::kSeqAnnotation) : nullptr;
      if (!seq) continue;
      const int64_t s = std::stoll(std::string(seq->as_string()));
      EXPECT_EQ(intents[s], name) << "PATCH of " << name << " names seq " << s;
      ++checked;
    }
    EXPECT_EQ(checked, kSandboxes);
    EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"), kSandboxes);  // one each
  }
  // While the volume stays full: every sandbox suspended, each PATCH an intent.
  void ExpectEverySandboxSuspended(testing::ControllerInstance& in) {
    EXPECT_TRUE(Eventually([&] { return Suspended() == kSandboxes; }, 20s))
        << Suspended() << " of " << kSandboxes << " suspended while the volume is full";
    EXPECT_TRUE(filled_);
    EXPECT_TRUE(in.journal->shedding());
    ExpectEveryPatchAnIntent();
  }
  // Space has returned: the reserve comes back and no intent stays pending.
  void ExpectRecovery(testing::ControllerInstance& in) {
    const journal::SpaceStatus s = in.journal->CheckSpace();
    EXPECT_TRUE(s.reserve_held);
    EXPECT_FALSE(s.shedding);
    EXPECT_TRUE(Eventually([&] {
      return Count("SELECT count(*) FROM transitions WHERE outcome = 'pending'") == 0 &&
             Count("SELECT count(*) FROM transitions WHERE outcome = 'applied'") == kSandboxes;
    })) << Count("SELECT count(*) FROM transitions WHERE outcome = 'pending'")
        << " pending";
  }

  std::string path_;
  int64_t reserve_bytes_ = 0;  // the reserve's size when the fence rolled
  std::atomic<bool> filled_{false};
};

TEST_F(FullVolumeRollout, EveryStaleSandboxIsSuspendedWhileTheVolumeStaysFull) {
  testing::TempDir dir;
  testing::FaultVfs vfs;
  vfs.SetVolume(dir.path().string(), kVolumeBytes);
  journal::OpenOptions options;
  options.vfs = vfs.name();
  options.volume_space = [&vfs] {
    const auto s = vfs.VolumeSpace();
    return Result<journal::VolumeSpace>(journal::VolumeSpace{s.free_bytes, s.size_bytes});
  };
  options.reserve_bytes = journal::ReserveFor({kVolumeBytes, kVolumeBytes});
  auto in = Rollout(dir.File("journal.db"), options, [&vfs] { vfs.FillVolume(); });
  ASSERT_TRUE(in);
  ExpectEverySandboxSuspended(*in);
  // It stayed full: nothing is free but what the reserve left.
  EXPECT_LE(vfs.VolumeSpace().free_bytes, reserve_bytes_);
  vfs.FreeVolume();
  ExpectRecovery(*in);
}

// Writes `file` until the volume has no byte left.
void FillWith(const std::string& file) {
  FILE* f = std::fopen(file.c_str(), "wb");
  if (!f) return;
  const std::string block(4096, 'x');
  while (std::fwrite(block.data(), 1, block.size(), f) == block.size() && std::fflush(f) == 0) {
  }
  const std::string byte(1, 'x');
  while (std::fwrite(byte.data(), 1, 1, f) == 1 && std::fflush(f) == 0) {
  }
  std::fclose(f);
}

TEST_F(FullVolumeRollout, OnARealVolumeToo) {
  testing::TempDir dir;
  const std::string volume = dir.File("volume");
  std::filesystem::create_directory(volume);
  const std::string size = "size=" + std::to_string(kVolumeBytes);
  if (::mount("fencekeeper-test", volume.c_str(), "tmpfs", 0, size.c_str()) != 0)
    GTEST_SKIP() << "cannot mount a tmpfs on " << volume << ": " << std::strerror(errno)
                 << " (needs root or CAP_SYS_ADMIN); the fault-injecting VFS test covers the "
                    "mechanism";
  struct Unmount {
    std::string dir;
    ~Unmount() { ::umount2(dir.c_str(), MNT_DETACH); }
  } unmount{volume};
  const std::string path = volume + "/journal.db";
  journal::OpenOptions options;
  options.reserve_bytes = journal::ReserveFor(*journal::SpaceOf(path));
  const std::string filler = volume + "/filler";
  auto in = Rollout(path, options, [&filler] { FillWith(filler); });
  ASSERT_TRUE(in);
  ExpectEverySandboxSuspended(*in);
  EXPECT_LE(journal::SpaceOf(path)->free_bytes, reserve_bytes_);  // it stayed full
  std::filesystem::remove(filler);
  ExpectRecovery(*in);
}

}  // namespace
}  // namespace fk::reconciler
