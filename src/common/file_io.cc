#include "common/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace fk {

bool WriteAll(int fd, std::string_view bytes) {
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) errno = EIO;  // no progress, and write(2) set no error
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

namespace {
Status CannotWrite(const std::string& path, const char* step, int error) {
  return Status::IOError("cannot write '" + path + "' (" + step + "): " + std::strerror(error));
}
}  // namespace

Status WritePrivateFile(const std::string& path, std::string_view bytes) {
  // Written whole beside it, created 0600, then renamed over it: the file is
  // never readable by others, not even for a moment, and a failure leaves the
  // old one as it was.
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());  // a leftover of a crash, whatever its mode
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return CannotWrite(tmp, "create", errno);
  if (!WriteAll(fd, bytes)) {
    const int error = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return CannotWrite(tmp, "write", error);
  }
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    return CannotWrite(tmp, "close", error);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    return CannotWrite(path, "rename", error);
  }
  return Status::Ok();
}

}  // namespace fk
