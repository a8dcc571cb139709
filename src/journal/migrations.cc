#include "journal/migrations.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

#include <string>

#include "common/clock.h"
#include "common/status.h"

namespace fk::journal {
namespace {

int HexDigit(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// unhex(X) of SQLite 3.41, for migration 10 on an older library: the bytes
// X spells in hexadecimal; NULL when X is NULL or not an even number of hex
// digits (the migration converts only hashes the schema-6 CHECK admitted).
void Unhex(sqlite3_context* ctx, int /*argc*/, sqlite3_value** argv) {
  const auto* text = sqlite3_value_text(argv[0]);
  const int size = sqlite3_value_bytes(argv[0]);
  bool ok = text != nullptr && size % 2 == 0;
  std::string bytes(ok ? static_cast<size_t>(size / 2) : 0, '\0');
  for (int i = 0; ok && i < size; i += 2) {
    const int hi = HexDigit(text[i]), lo = HexDigit(text[i + 1]);
    ok = hi >= 0 && lo >= 0;
    bytes[static_cast<size_t>(i / 2)] = static_cast<char>(hi * 16 + lo);
  }
  if (ok) {
    sqlite3_result_blob(ctx, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  } else {
    sqlite3_result_null(ctx);
  }
}

void ProvideUnhex(SQLite::Database& db) {
  if (sqlite3_libversion_number() >= 3041000) return;  // built in
  sqlite3_create_function(db.getHandle(), "unhex", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                          &Unhex, nullptr, nullptr);
}

}  // namespace

int LatestSchemaVersion() {
  const auto& m = EmbeddedMigrations();
  return m.empty() ? 0 : m.back().version;
}

Status ApplyMigrations(SQLite::Database& db, const std::vector<Migration>& migrations,
                       const TimeSource& clock) {
  ProvideUnhex(db);
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

Status UseIncrementalVacuum(SQLite::Database& db, int64_t free_bytes) {
  try {
    if (db.execAndGet("PRAGMA auto_vacuum").getInt() == 2) return Status::Ok();
    const int64_t file = db.execAndGet("PRAGMA page_count").getInt64() *
                         db.execAndGet("PRAGMA page_size").getInt64();
    if (free_bytes < 2 * file) {
      return Status::IOError("no room to VACUUM: " + std::to_string(free_bytes) +
                             " bytes free, twice the file's " + std::to_string(file) + " needed");
    }
    db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    db.exec("VACUUM");
    return Status::Ok();
  } catch (const SQLite::Exception& e) {
    return Status::IOError(std::string("VACUUM to auto_vacuum = INCREMENTAL failed: ") + e.what());
  }
}

}  // namespace fk::journal
