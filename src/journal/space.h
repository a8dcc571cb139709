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

// The reserve `run` keeps on a volume of this size: 1/64 of it, at least
// 256 KiB and at most 16 MiB (some thousands of intents and outcomes).
int64_t ReserveFor(const VolumeSpace& volume);

class SpaceReserve {
 public:
  SpaceReserve(std::string path, int64_t bytes) : path_(std::move(path)), bytes_(bytes) {}
  const std::string& path() const { return path_; }
  int64_t bytes() const { return bytes_; }
  bool held() const { return held_; }
  // Allocates the file's blocks (posix_fallocate) and syncs it; a reserve
  // left by an earlier run is taken over.
  Status Take();
  // Removes the file: its blocks are free for the journal at once.
  Status Release();

 private:
  const std::string path_;
  const int64_t bytes_;
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
