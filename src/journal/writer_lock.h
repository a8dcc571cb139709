// One writer per journal (docs/design.md#one-writer-per-journal).
//
// Why: SQLite's locks serialise transactions, not processes. A second `run`
// on the same file started, reported ready and wrote, and from then on the
// first failed every write. So `run` and `migrate` take this
// exclusive advisory lock before the journal is created, migrated or opened
// for writing, and hold it for the life of the process; a second writer is
// refused at start.
//
// Why flock(2) on a file of its own, not fcntl(2) on the journal: a POSIX
// fcntl lock belongs to the process, so it never conflicts with another
// descriptor of the same process, and it is dropped when *any* descriptor of
// the file in the process is closed — SQLite opens and closes descriptors of
// the journal (read-only connections, backup), and warns about exactly this.
// A flock lock belongs to the open file description made here, kept open
// while the lock is held: it conflicts with every other open of the file,
// this process's own included, no other close releases it, and the kernel
// drops it when the process ends, kill -9 included, so a restart needs no
// clean-up. SQLite never opens `JOURNAL.lock`, so its own locks, and the
// readers (`sqlite3 -readonly`, `replay`, `backup`), never meet this one.
//
// Who holds it (host, pid, writer, since) is written to `JOURNAL.holder`,
// replaced atomically once the lock is held, so that a refused writer can
// name its holder. That file is information only: the lock is the
// authority, and the stale file a killed holder leaves behind means nothing.
// The holder never reads either file again: it never notices a refused one.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"

namespace fk::journal {

// Who holds a journal's writer lock, as the holder recorded it.
struct WriterHolder {
  std::string host;
  int64_t pid = 0;
  std::string writer;  // the `run` process's writer id, or the command ("migrate")
  std::string since;   // when it took the lock, RFC 3339 UTC
};

class WriterLock {
 public:
  // Takes the lock of `journal` (which need not exist yet; nothing is written
  // to it) for `writer`. Refuses at once, never waiting, with kBusy and a
  // message naming the journal and its holder while another open holds it.
  static Result<std::unique_ptr<WriterLock>> Acquire(const std::string& journal,
                                                     const std::string& writer);
  // Releases the lock (and removes the holder details).
  ~WriterLock();
  WriterLock(const WriterLock&) = delete;
  WriterLock& operator=(const WriterLock&) = delete;

  // The files beside the journal: the lock, and who holds it.
  static std::string LockPath(const std::string& journal);
  static std::string HolderPath(const std::string& journal);
  // The holder details last recorded for `journal`; nullopt if there are none
  // (or they do not parse). Says nothing about whether the lock is held.
  static std::optional<WriterHolder> ReadHolder(const std::string& journal);

 private:
  WriterLock(int fd, std::string holder_path) : fd_(fd), holder_path_(std::move(holder_path)) {}
  int fd_;
  std::string holder_path_;
};

}  // namespace fk::journal
