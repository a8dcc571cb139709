#include "journal/space.h"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "journal/sqlite_status.h"

namespace fk::journal {

Result<VolumeSpace> SpaceOf(const std::string& path) {
  const std::string dir = std::filesystem::absolute(path).parent_path().string();
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0)
    return Status::IOError("cannot read the free space of " + Quote(dir) + ": " +
                           std::strerror(errno));
  return VolumeSpace{static_cast<int64_t>(st.f_bavail) * static_cast<int64_t>(st.f_frsize),
                     static_cast<int64_t>(st.f_blocks) * static_cast<int64_t>(st.f_frsize)};
}

int64_t ReserveFor(const VolumeSpace& volume, size_t sandboxes) {
  const int64_t work = kReserveWal + static_cast<int64_t>(sandboxes) * kReservePerSandbox;
  return std::min(work, std::max<int64_t>(volume.size_bytes / 4, 256 << 10));
}

Status SpaceReserve::Take() {
  if (bytes_ <= 0) return Status::Ok();
  const int fd = ::open(path_.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    return Status::IOError("cannot create the reserve " + Quote(path_) + ": " +
                           std::strerror(errno));
  int rc = ::posix_fallocate(fd, 0, bytes_);
  if (rc == 0 && ::fsync(fd) != 0) rc = errno;
  ::close(fd);
  if (rc != 0) {
    if (held_)
      return Status::IOError("cannot grow the reserve " + Quote(path_) + " to " +
                             std::to_string(bytes_) + " bytes: " + std::strerror(rc));
    ::unlink(path_.c_str());  // a partial reserve would only take space
    return Status::IOError("cannot allocate the reserve " + Quote(path_) + " (" +
                           std::to_string(bytes_) + " bytes): " + std::strerror(rc));
  }
  held_ = true;
  return Status::Ok();
}

Status SpaceReserve::Grow(int64_t bytes) {
  if (bytes <= bytes_) return Status::Ok();
  bytes_ = bytes;
  return held_ ? Take() : Status::Ok();
}

Status SpaceReserve::Release() {
  if (!held_) return Status::Ok();
  if (::unlink(path_.c_str()) != 0 && errno != ENOENT)
    return Status::IOError("cannot remove the reserve " + Quote(path_) + ": " +
                           std::strerror(errno));
  held_ = false;
  return Status::Ok();
}

}  // namespace fk::journal
