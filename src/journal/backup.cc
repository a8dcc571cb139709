#include "journal/backup.h"

#include <fcntl.h>
#include <unistd.h>

#include <sqlite3.h>

#include <SQLiteCpp/Backup.h>
#include <SQLiteCpp/SQLiteCpp.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "journal/journal.h"
#include "journal/migrations.h"
#include "journal/read_only.h"

namespace fk::journal {
namespace fs = std::filesystem;

namespace {

// The destination is created here, not by SQLite: it must not exist (a
// backup is never overwritten), and it is as private as the journal (0600).
Status CreateDestination(const std::string& destination) {
  int fd = ::open(destination.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::IOError("cannot create backup '" + destination + "': " + std::strerror(errno));
  }
  ::close(fd);
  return Status::Ok();
}

// The copy and the files SQLite may have made beside it.
void RemoveDestination(const std::string& destination) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(destination + suffix, ec);
}

// Copies every page of `source` into `destination` and leaves the copy in
// rollback mode. SQLite failures throw SQLite::Exception.
Status CopyPages(const std::string& source, const std::string& destination, TimeSource& time) {
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
      Interrupt never;  // a backup is short and not cancelled midway
      time.SleepFor(std::chrono::milliseconds(20), never);
      continue;
    }
    return Status::IOError("backup of '" + source + "' did not complete (SQLite code " +
                           std::to_string(rc) + ")");
  }
  // The copy carries the journal's WAL flag in its header; a backup is a
  // self-contained file, opened later from read-only media where a WAL
  // database cannot be read without -shm/-wal files: rollback mode.
  if (dst.execAndGet("PRAGMA journal_mode = DELETE").getString() != "delete") {
    return Status::IOError("backup '" + destination + "' could not leave WAL mode");
  }
  return Status::Ok();
}

// Reopens the finished copy on its own: it must pass integrity_check and
// still be a fencekeeper journal before it is reported as a backup.
Result<BackupReport> VerifyBackup(const std::string& destination) {
  SQLite::Database check(destination, SQLite::OPEN_READONLY);
  const std::string integrity = check.execAndGet("PRAGMA integrity_check").getString();
  if (integrity != "ok")
    return Status::Corruption("backup '" + destination + "' failed integrity_check: " + integrity);
  BackupReport r;
  r.events = check.execAndGet("SELECT count(*) FROM events").getInt64();
  r.last_seq = check.execAndGet("SELECT COALESCE(max(seq), 0) FROM events").getInt64();
  r.schema_version = check.execAndGet("PRAGMA user_version").getInt();
  if (check.execAndGet("PRAGMA application_id").getInt() != kApplicationId) {
    return Status::Corruption("backup '" + destination + "' lost the journal's application_id");
  }
  std::error_code ec;
  r.bytes = static_cast<int64_t>(fs::file_size(destination, ec));
  return r;
}

Result<BackupReport> CopyAndVerify(const std::string& source, const std::string& destination,
                                   TimeSource& time) {
  try {
    if (Status s = CopyPages(source, destination, time); !s.ok()) return s;
    return VerifyBackup(destination);
  } catch (const SQLite::Exception& e) {
    return Status::IOError("backup of '" + source + "' to '" + destination +
                           "' failed: " + e.what());
  }
}

}  // namespace

Result<BackupReport> BackupJournal(const std::string& source, const std::string& destination,
                                   TimeSource& time) {
  auto info = InspectJournalFile(source);
  if (!info.ok()) return info.status();
  if (!info->exists || info->empty)
    return Status::NotFound("journal '" + source + "' does not exist or is empty");
  if (Status s = CreateDestination(destination); !s.ok()) return s;
  auto report = CopyAndVerify(source, destination, time);
  // A failed backup leaves nothing behind that could be mistaken for one.
  if (!report.ok()) RemoveDestination(destination);
  return report;
}

}  // namespace fk::journal
