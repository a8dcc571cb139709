// schema/schema.sql is the full current schema: migrating an empty file must
// yield exactly what executing schema.sql yields.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <map>

#include "domain/decision.h"
#include "domain/event.h"
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

// journal_names spells each integer code the compact rows store as the
// domain names it: every value of every enum, and nothing else (a reason
// added to the domain without a migration would show as NULL in the views).
TEST(Schema, JournalNamesAreTheDomainsNames) {
  testing::TempDir dir;
  ASSERT_TRUE(Journal::Open(dir.File("j.db")).ok());
  SQLite::Database db(dir.File("j.db"), SQLite::OPEN_READONLY);
  std::map<std::string, std::vector<std::string>> stored;
  SQLite::Statement q(db, "SELECT field, code, name FROM journal_names ORDER BY field, code");
  while (q.executeStep()) {
    auto& names = stored[q.getColumn(0).getString()];
    EXPECT_EQ(q.getColumn(1).getInt(), static_cast<int>(names.size())) << "codes count from 0";
    names.push_back(q.getColumn(2).getString());
  }
  // The codes of enum E: 0, 1, ... until ToString names none ("unknown").
  const auto names_of = [](auto e) {
    using E = decltype(e);
    std::vector<std::string> out;
    for (int i = 0; std::string(ToString(static_cast<E>(i))) != "unknown"; ++i)
      out.push_back(ToString(static_cast<E>(i)));
    return out;
  };
  std::map<std::string, std::vector<std::string>> want = {
      {"api_version", names_of(domain::ApiVersion{})},
      {"bootstrap_op", names_of(domain::BootstrapOp{})},
      {"verdict", names_of(domain::Verdict{})},
      {"reason", names_of(domain::Reason{})},
      {"action", names_of(domain::Action{})},
      {"outcome", names_of(domain::Outcome{})},
      {"widens", {"none", "egress", "ingress", "both"}}};
  for (int w = 0; w < 4; ++w)
    EXPECT_EQ(want["widens"][w], ToString(static_cast<domain::Widens>(w)));
  EXPECT_EQ(stored, want);
  ASSERT_EQ(stored["reason"].size(), 7u);
  EXPECT_EQ(stored["reason"][6], "fence-bypassed");
}

}  // namespace
}  // namespace fk::journal
