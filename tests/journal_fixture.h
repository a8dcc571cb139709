// Journal helpers for GoogleTest tests (test_support.h serves the benchmarks too).
#pragma once

#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "journal/codec.h"
#include "journal/journal.h"
#include "test_support.h"

namespace fk::testing {

// Opens (creating) the journal at `path` on `clock`; a failure fails the
// test and returns null.
inline std::unique_ptr<journal::Journal> OpenJournal(const std::string& path,
                                                     const TimeSource* clock,
                                                     journal::OpenOptions options = {}) {
  options.clock = clock;
  auto j = journal::Journal::Open(path, options);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? std::move(*j) : nullptr;
}

// The journal a tests/data/ dump holds (an older schema), as a file.
inline void MakeJournalFromDump(const std::string& path, const std::string& dump) {
  const std::string sql = ReadBytes(std::string(FK_SOURCE_DIR) + "/tests/data/" + dump);
  ASSERT_FALSE(sql.empty());
  SQLite::Database db(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  db.exec(sql);
  db.exec("PRAGMA journal_mode = WAL");
}

// What the stock sqlite3 shell's schema/audit/verify_chain.sql prints for
// the journal at `path` (stderr too), and its last line: the number of
// mismatches (rows and run starts), -1 when that line is not a number.
struct ShellVerdict {
  std::string out;
  int64_t mismatches = -1;
};
inline ShellVerdict StockShellVerify(const std::string& path) {
  const auto r = RunShell("sqlite3 -readonly '" + path +
                          "' < " FK_SOURCE_DIR "/schema/audit/verify_chain.sql 2>&1");
  EXPECT_EQ(r.exit_code, 0) << r.out;
  const size_t end = r.out.find_last_not_of('\n');
  if (end == std::string::npos) return {r.out, -1};
  const size_t start = r.out.find_last_of('\n', end);
  const std::string last = r.out.substr(start == std::string::npos ? 0 : start + 1,
                                        end - (start == std::string::npos ? 0 : start + 1) + 1);
  if (last.empty() || last.find_first_not_of("0123456789") != std::string::npos) return {r.out, -1};
  return {r.out, std::stoll(last)};
}

// Each row `sql` returns, its columns joined by '|' (NULL as "NULL"): what a
// test compares before and after an upgrade.
inline std::vector<std::string> Rows(const std::string& path, const std::string& sql) {
  SQLite::Database db(path, SQLite::OPEN_READONLY);
  SQLite::Statement q(db, sql);
  std::vector<std::string> out;
  while (q.executeStep()) {
    std::string row;
    for (int c = 0; c < q.getColumnCount(); ++c)
      row += (c ? "|" : "") + (q.getColumn(c).isNull() ? "NULL" : q.getColumn(c).getString());
    out.push_back(row);
  }
  return out;
}

// The latest observation of sandbox `uid` that the journal at `path` holds
// (its projection row): a live journal keeps only a digest of it in memory.
inline domain::Snapshot RecordedObservation(const std::string& path, const std::string& uid) {
  const std::vector<std::string> rows =
      Rows(path, "SELECT observation FROM sandbox_projection WHERE sandbox_uid = '" + uid + "'");
  EXPECT_EQ(rows.size(), 1u) << uid;
  if (rows.size() != 1) return {};
  auto snapshot = journal::DecodeSnapshot(rows[0]);
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().ToString();
  return snapshot.ok() ? *snapshot : domain::Snapshot{};
}

}  // namespace fk::testing
