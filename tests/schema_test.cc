// schema/schema.sql is the full current schema: migrating an empty file must
// yield exactly what executing schema.sql yields.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include "journal/journal.h"
#include "test_support.h"

namespace fk::journal {
namespace {

// Every schema object with its normalized SQL, in a stable order.
std::vector<std::string> SchemaOf(SQLite::Database& db) {
  SQLite::Statement q(db,
                      "SELECT type, name, tbl_name, COALESCE(sql, '') FROM sqlite_schema "
                      "WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name");
  std::vector<std::string> out;
  while (q.executeStep()) {
    std::string sql = q.getColumn(3).getString();
    std::string squeezed;
    for (char c : sql) {
      if (std::isspace(static_cast<unsigned char>(c))) {
        if (!squeezed.empty() && squeezed.back() != ' ') squeezed += ' ';
      } else {
        squeezed += c;
      }
    }
    out.push_back(q.getColumn(0).getString() + " " + q.getColumn(1).getString() + " on " +
                  q.getColumn(2).getString() + ": " + squeezed);
  }
  return out;
}

TEST(Schema, MigratingAnEmptyFileYieldsSchemaSql) {
  testing::TempDir dir;
  const std::string migrated_path = dir.File("migrated.db");
  ASSERT_TRUE(Journal::Open(migrated_path).ok());
  SQLite::Database migrated(migrated_path, SQLite::OPEN_READONLY);

  SQLite::Database reference(dir.File("reference.db"),
                             SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  const std::string schema = testing::ReadBytes(std::string(FK_SOURCE_DIR) + "/schema/schema.sql");
  ASSERT_FALSE(schema.empty());
  reference.exec(schema);

  const auto got = SchemaOf(migrated);
  const auto want = SchemaOf(reference);
  EXPECT_GE(want.size(), 10u);
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace fk::journal
