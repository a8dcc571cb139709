// A consistent copy of a live journal through SQLite's online backup API.
// Safe while `run` writes: the copy is one read snapshot, whereas a plain
// file copy of a WAL database can catch the main file and the -wal file at
// different moments. The copy is verified with integrity_check before success.
#pragma once

#include <cstdint>
#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace fk::journal {

struct BackupReport {
  int64_t events = 0;
  int64_t last_seq = 0;
  int schema_version = 0;
  int64_t bytes = 0;
};

// Refuses a source that is not a fencekeeper journal and a destination that
// already exists. On any failure the partial destination is removed. A copy
// step that finds the source busy is retried after a short wait on `time`.
Result<BackupReport> BackupJournal(const std::string& source, const std::string& destination,
                                   TimeSource& time = RealTimeSource::Instance());

}  // namespace fk::journal
