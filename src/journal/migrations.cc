#include "journal/migrations.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "common/clock.h"
#include "common/status.h"

namespace fk::journal {

int LatestSchemaVersion() {
  const auto& m = EmbeddedMigrations();
  return m.empty() ? 0 : m.back().version;
}

Status ApplyMigrations(SQLite::Database& db, const std::vector<Migration>& migrations,
                       const TimeSource& clock) {
  for (const Migration& m : migrations) {
    try {
      SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
      // Re-read inside the write lock: another process may have migrated.
      const int current = db.execAndGet("PRAGMA user_version").getInt();
      if (current >= m.version) continue;
      if (current != m.version - 1) {
        return Status::Corruption("journal is at schema version " + std::to_string(current) +
                                  " but the next migration is " + m.name);
      }
      db.exec(m.sql);
      db.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
      db.exec("PRAGMA user_version = " + std::to_string(m.version));
      SQLite::Statement record(db,
                               "INSERT INTO schema_migrations (version, name, applied_at) "
                               "VALUES (?, ?, ?)");
      record.bind(1, m.version);
      record.bind(2, m.name);
      record.bind(3, FormatRfc3339(clock.Now()));
      record.exec();
      tx.commit();
    } catch (const SQLite::Exception& e) {
      return Status::IOError("migration " + m.name + " failed: " + e.what());
    }
  }
  return Status::Ok();
}

}  // namespace fk::journal
