// The journal's volume and its reserve (docs/retention.md#a-full-volume):
// fail-closed transitions must be the last thing a full volume stops. The
// journal keeps a reserve file beside it (`<journal>.reserve`, blocks
// allocated for real) that it gives up the moment a write finds the volume
// full, and then sheds what is not essential: an evaluation that records no
// intent appends nothing, while intents and outcomes still go in. When the
// volume has room again the reserve is taken back and shedding stops.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "common/status.h"

namespace fk::journal {

struct VolumeSpace {
  int64_t free_bytes = 0;  // what an unprivileged writer may still use
  int64_t size_bytes = 0;
};

// statvfs of the directory holding `path`.
Result<VolumeSpace> SpaceOf(const std::string& path);

// What the reserve must carry while the volume is full
// (docs/retention.md#a-full-volume): every sandbox the journal knows may
// need one intent, with the observation and decision it rests on, and one
// outcome; together they take at most kReservePerSandbox of the main file
// (measured at about 1 KiB, doubled). The WAL between two checkpoints takes
// at most kReserveWal while the volume is short (the journal checkpoints
// every kShortWalPages pages and commits at most kShortBatchCalls calls at
// a time then).
inline constexpr int64_t kReservePerSandbox = 2 << 10;
inline constexpr int64_t kReserveWal = 512 << 10;
inline constexpr int kShortWalPages = 32;
inline constexpr size_t kShortBatchCalls = 32;

// The reserve for `sandboxes` on `volume`: kReserveWal + sandboxes x
// kReservePerSandbox, at most a quarter of the volume. `run` opens the
// journal with ReserveFor(volume) and the journal grows its reserve as
// sandboxes come (a 1 GiB volume with 30,000 sandboxes keeps back 59 MiB).
int64_t ReserveFor(const VolumeSpace& volume, size_t sandboxes = 0);

class SpaceReserve {
 public:
  SpaceReserve(std::string path, int64_t bytes) : path_(std::move(path)), bytes_(bytes) {}
  const std::string& path() const { return path_; }
  int64_t bytes() const { return bytes_; }
  bool held() const { return held_; }
  // Allocates the file's blocks (posix_fallocate) and syncs it; a reserve
  // left by an earlier run, or one short of bytes(), is taken over.
  Status Take();
  // From now on the reserve is `bytes` (never less than it was): a held
  // reserve is grown at once, one given up is taken back at that size.
  Status Grow(int64_t bytes);
  // Removes the file: its blocks are free for the journal at once.
  Status Release();

 private:
  const std::string path_;
  int64_t bytes_;
  bool held_ = false;
};

// What CheckSpace found.
struct SpaceStatus {
  bool known = false;  // the volume could be asked
  VolumeSpace volume;
  bool reserve_held = false;
  bool shedding = false;  // non-essential rows are not appended
  int64_t reserve_bytes = 0;
};

}  // namespace fk::journal
