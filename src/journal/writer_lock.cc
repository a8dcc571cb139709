#include "journal/writer_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "common/clock.h"
#include "common/file_io.h"
#include "common/host_name.h"
#include "journal/sqlite_status.h"

namespace fk::journal {

namespace {

namespace fs = std::filesystem;
namespace json = boost::json;

// The journal's real path: a symlink to the journal and the journal itself
// share one lock.
std::string Canonical(const std::string& journal) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(journal, ec);
  if (ec) return journal;
  const fs::path real = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.string() : real.string();
}

// Replaces `path` with `holder` as one JSON line: written beside it, then
// renamed over it, so a reader sees the old details or the new, never half.
// Best effort: the details are information, not the lock, and a full disk
// must not stop a writer from starting. If they cannot be written, stale
// details are removed rather than left to name the wrong holder.
void WriteHolder(const std::string& path, const WriterHolder& holder) {
  const std::string line = json::serialize(json::object{{"host", holder.host},
                                                        {"pid", holder.pid},
                                                        {"writer", holder.writer},
                                                        {"since", holder.since}}) +
                           "\n";
  const std::string tmp = path + ".tmp";  // only the lock's holder writes here
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  bool written = fd >= 0 && WriteAll(fd, line);
  if (fd >= 0) written = ::close(fd) == 0 && written;
  if (!written || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    ::unlink(path.c_str());
  }
}

std::string HolderText(const std::string& journal) {
  const std::optional<WriterHolder> h = WriterLock::ReadHolder(journal);
  if (!h) {
    return "its holder left no details in " + Quote(WriterLock::HolderPath(journal));
  }
  return "host " + h->host + ", pid " + std::to_string(h->pid) + ", writer " + h->writer +
         ", since " + h->since;
}

std::string CannotLock(const std::string& journal) {
  return "cannot lock journal " + Quote(journal) + " for writing: ";
}

}  // namespace

std::string WriterLock::LockPath(const std::string& journal) {
  return Canonical(journal) + ".lock";
}

std::string WriterLock::HolderPath(const std::string& journal) {
  return Canonical(journal) + ".holder";
}

Result<std::unique_ptr<WriterLock>> WriterLock::Acquire(const std::string& journal,
                                                        const std::string& writer) {
  const std::string lock_path = LockPath(journal);
  // Never closed while the lock is held: the lock lives on this open file description.
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    const std::string parent = fs::path(lock_path).parent_path().string();
    std::error_code ec;
    if (errno == ENOENT && !fs::is_directory(parent, ec)) {
      return Status::IOError(CannotLock(journal) + "directory " + Quote(parent) +
                             " does not exist");
    }
    return Status::IOError(CannotLock(journal) + Quote(lock_path) + ": " + std::strerror(errno));
  }
  int rc = 0;
  while ((rc = ::flock(fd, LOCK_EX | LOCK_NB)) != 0 && errno == EINTR) {
  }
  if (rc != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) {
      return Status::Busy("journal " + Quote(journal) + " already has a writer (" +
                          HolderText(journal) + "); a journal has one writer at a time (lock " +
                          Quote(lock_path) + ")");
    }
    return Status::IOError(CannotLock(journal) + "flock " + Quote(lock_path) + ": " +
                           std::strerror(error));
  }
  const std::string holder_path = HolderPath(journal);
  WriteHolder(holder_path,
              {HostName(), ::getpid(), writer, FormatRfc3339(RealTimeSource::Instance().Now())});
  return std::unique_ptr<WriterLock>(new WriterLock(fd, holder_path));
}

WriterLock::~WriterLock() {
  // The details first: once the lock is released they would name us wrongly.
  ::unlink(holder_path_.c_str());
  ::close(fd_);
}

std::optional<WriterHolder> WriterLock::ReadHolder(const std::string& journal) {
  std::ifstream in(HolderPath(journal), std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  boost::system::error_code ec;
  const json::value v = json::parse(text, ec);
  if (ec || !v.is_object()) return std::nullopt;
  const json::object& o = v.as_object();
  const auto* host = o.if_contains("host");
  const auto* pid = o.if_contains("pid");
  const auto* writer = o.if_contains("writer");
  const auto* since = o.if_contains("since");
  if (!host || !host->is_string() || !pid || !pid->is_int64() || !writer || !writer->is_string() ||
      !since || !since->is_string()) {
    return std::nullopt;
  }
  return WriterHolder{std::string(host->as_string()), pid->as_int64(),
                      std::string(writer->as_string()), std::string(since->as_string())};
}

}  // namespace fk::journal
