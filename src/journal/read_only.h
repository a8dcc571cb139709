// Opening a journal for reading without writing anything next to it.
//
// SQLite opens a WAL-mode database read-only only if its -shm and -wal files
// exist or can be created, and a read-only connection cannot remove them
// again: `replay` on a snapshot or a restored backup either failed ("attempt
// to write a readonly database" on read-only media) or left -wal/-shm files
// behind. The rule here:
//   - no -wal file beside the journal: no WAL writer has it open (a live
//     writer keeps its -wal file until it closes), and every committed change
//     is in the main file. It is opened `immutable=1`: no locks, no -shm, no
//     -wal, nothing written anywhere.
//     Trade-off: SQLite then assumes nobody changes the file while it is
//     open. A fencekeeper starting on the same file during the read could
//     make that read fail (never the file: the reader writes nothing).
//   - a -wal file exists: it may hold committed transactions, or a live
//     writer may be using it, so the journal is opened `mode=ro` with normal
//     locking and the WAL is read. That needs the -shm file to exist or the
//     directory to be writable; on read-only media with a -wal but no -shm,
//     SQLite refuses, and the error says to copy the files somewhere writable.
#pragma once

#include <string>

namespace fk::journal {

// The SQLite URI (open with SQLITE_OPEN_URI | SQLITE_OPEN_READONLY) that
// reads `path` by the rule above.
std::string ReadOnlyUri(const std::string& path);

}  // namespace fk::journal
