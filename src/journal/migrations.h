// Forward-only schema migrations, embedded from migrations/*.sql at build
// time (cmake/embed_migrations.cmake). Migration N is applied in one
// BEGIN IMMEDIATE transaction that also sets PRAGMA user_version = N, so a
// crash leaves the file at N-1 or N, never in between.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace SQLite {
class Database;
}

namespace fk {
class TimeSource;
class Status;
}  // namespace fk

namespace fk::journal {

// PRAGMA application_id of every fencekeeper journal: "FKJ1" in ASCII.
inline constexpr int32_t kApplicationId = 0x464B4A31;

struct Migration {
  int version;
  std::string name;
  std::string sql;
};

const std::vector<Migration>& EmbeddedMigrations();
int LatestSchemaVersion();

// Applies every migration newer than the file's user_version. Throws nothing;
// a failed migration is rolled back and reported.
Status ApplyMigrations(SQLite::Database& db, const std::vector<Migration>& migrations,
                       const TimeSource& clock);

// The second half of migration 10 (migrations/0010_hash_bytes.sql): a file
// not yet in auto_vacuum = INCREMENTAL is switched with one VACUUM, outside
// any transaction. A new journal is created so and needs none. Failing
// (another connection reading, no room for the copy) leaves the journal as
// it was, usable, its free pages reused but not given back; the next open
// tries again. The VACUUM writes the whole file into the WAL: it is not tried
// unless `free_bytes` (the volume's, less what must stay free) is at least
// twice the file, so that it never fills the volume.
Status UseIncrementalVacuum(SQLite::Database& db, int64_t free_bytes);

}  // namespace fk::journal
