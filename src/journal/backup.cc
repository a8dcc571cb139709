#include "journal/backup.h"

#include <fcntl.h>
#include <unistd.h>

#include <sqlite3.h>

#include <SQLiteCpp/Backup.h>
#include <SQLiteCpp/SQLiteCpp.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <thread>

#include "journal/journal.h"
#include "journal/migrations.h"
#include "journal/read_only.h"

namespace fk::journal {
namespace fs = std::filesystem;

Result<BackupReport> BackupJournal(const std::string& source, const std::string& destination) {
  auto info = InspectJournalFile(source);
  if (!info.ok()) return info.status();
  if (!info->exists || info->empty)
    return Status::NotFound("journal '" + source + "' does not exist or is empty");
  // Create the destination ourselves: it must not exist (never overwrite a
  // backup), and it is as private as the journal (0600).
  int fd = ::open(destination.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::IOError("cannot create backup '" + destination + "': " + std::strerror(errno));
  }
  ::close(fd);
  auto discard = [&](Status s) -> Result<BackupReport> {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"})
      fs::remove(destination + suffix, ec);
    return s;
  };
  try {
    {
      // Read by ReadOnlyUri's rule: nothing is written beside the source.
      SQLite::Database src(ReadOnlyUri(source), SQLite::OPEN_READONLY | SQLite::OPEN_URI);
      src.setBusyTimeout(5000);
      SQLite::Database dst(destination, SQLite::OPEN_READWRITE);
      SQLite::Backup backup(dst, src);
      // All pages in one step: one consistent read snapshot of the source.
      for (int attempt = 0;; ++attempt) {
        const int rc = backup.executeStep(-1);
        if (rc == SQLITE_DONE) break;
        if ((rc == SQLITE_BUSY || rc == SQLITE_LOCKED) && attempt < 50) {
          std::this_thread::sleep_for(std::chrono::milliseconds(20));
          continue;
        }
        return discard(Status::IOError("backup of '" + source + "' did not complete (SQLite code " +
                                       std::to_string(rc) + ")"));
      }
      // The copy carries the journal's WAL flag in its header; a backup is a
      // self-contained file, opened later from read-only media where a WAL
      // database cannot be read without -shm/-wal files: rollback mode.
      if (dst.execAndGet("PRAGMA journal_mode = DELETE").getString() != "delete") {
        return discard(Status::IOError("backup '" + destination + "' could not leave WAL mode"));
      }
    }
    SQLite::Database check(destination, SQLite::OPEN_READONLY);
    const std::string integrity = check.execAndGet("PRAGMA integrity_check").getString();
    if (integrity != "ok")
      return discard(
          Status::Corruption("backup '" + destination + "' failed integrity_check: " + integrity));
    BackupReport r;
    r.events = check.execAndGet("SELECT count(*) FROM events").getInt64();
    r.last_seq = check.execAndGet("SELECT COALESCE(max(seq), 0) FROM events").getInt64();
    r.schema_version = check.execAndGet("PRAGMA user_version").getInt();
    if (check.execAndGet("PRAGMA application_id").getInt() != kApplicationId) {
      return discard(
          Status::Corruption("backup '" + destination + "' lost the journal's application_id"));
    }
    std::error_code ec;
    r.bytes = static_cast<int64_t>(fs::file_size(destination, ec));
    return r;
  } catch (const SQLite::Exception& e) {
    return discard(
        Status::IOError("backup of '" + source + "' to '" + destination + "' failed: " + e.what()));
  }
}

}  // namespace fk::journal
