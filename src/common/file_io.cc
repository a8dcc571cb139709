#include "common/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fk {

bool WriteAll(int fd, std::string_view bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Status WritePrivateFile(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Status::IOError("cannot write '" + path + "': " + std::strerror(errno));
  // O_CREAT's mode applies to a new file only; an existing one may be 0644.
  bool written = ::fchmod(fd, 0600) == 0 && WriteAll(fd, bytes);
  const int error = errno;
  written = ::close(fd) == 0 && written;
  if (!written) return Status::IOError("cannot write '" + path + "': " + std::strerror(error));
  return Status::Ok();
}

}  // namespace fk
