// SQLite failures as Statuses, for the journal's own source files (it pulls
// in SQLiteCpp: keep it out of headers that others include).
#pragma once

#include <SQLiteCpp/Exception.h>
#include <sqlite3.h>

#include <string>

#include "common/status.h"

namespace fk::journal {

// Maps an SQLite failure to a Status; disk-full and I/O errors stay
// distinguishable because the reconciler reacts to them (readiness off).
inline Status FromSqlite(const std::string& context, const SQLite::Exception& e) {
  const int primary = e.getErrorCode() & 0xff;
  std::string msg = context + ": " + e.what();
  switch (primary) {
    case SQLITE_FULL:
      return Status::IOError(msg + " (disk full)");
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
      return Status::IOError(msg);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Busy(msg);
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return Status::Corruption(msg);
    default:
      return Status::Internal(msg);
  }
}

inline std::string Quote(const std::string& path) { return "'" + path + "'"; }

}  // namespace fk::journal
