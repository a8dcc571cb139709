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

}  // namespace fk::journal
