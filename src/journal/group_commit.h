// The journal's insides shared by journal.cc (opening, reading, planning each
// call) and group_commit.cc (the queue and the batch transaction). Included by
// those two files only: it pulls in SQLiteCpp.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "journal/batch_state.h"
#include "journal/chain.h"
#include "journal/journal.h"
#include "journal/subjects.h"

namespace fk::journal {

// The statements of a batch's transaction, prepared once: parsing them again
// for every batch would cost more than a small batch's inserts.
struct BatchStatements {
  explicit BatchStatements(SQLite::Database& db);
  SQLite::Statement max_seq;
  SQLite::Statement insert_row;
  SQLite::Statement insert_subject;
  SQLite::Statement select_row;  // a known subject's row (subjects.h)
  SQLite::Statement upsert_fence;
  SQLite::Statement upsert_sandbox;
  SQLite::Statement delete_sandbox;
};

struct Journal::Impl {
  Impl(const std::string& path, int flags, const std::string& vfs, const TimeSource* c)
      : db(path, flags, 0, vfs), path(path), vfs(vfs), clock(c) {}
  SQLite::Database db;
  const std::string path, vfs;
  // Retention's own read-only connection (prune.cc): planning a step reads
  // its rows without holding `db`, so appends go on meanwhile (WAL readers
  // never block the writer). Made by the first step; used by one pruner.
  std::unique_ptr<SQLite::Database> reader;
  std::mutex reader_mu;
  const TimeSource* clock;
  std::unique_ptr<BatchStatements> statements;  // made by the first batch (after migrations)
  Subjects subjects;                            // under db_mu_
  chain::Head head;                             // the last chained row, under db_mu_
};

// The last seq of the journal, of either schema: a row of `journal` holds the
// events [seq, seq + events in its kind).
inline constexpr const char* kMaxSeqSql =
    "SELECT max((SELECT COALESCE(max(seq), 0) FROM events_v1), "
    "COALESCE((SELECT seq + CASE kind WHEN 8 THEN 1 WHEN 9 THEN 2 ELSE 0 END "
    "FROM journal ORDER BY seq DESC LIMIT 1), 0))";

// One call waiting in the group-commit queue. Everything but `done` and `cv`
// is touched by the batch's leader only, while the caller waits.
struct Journal::Member {
  using Plan = std::function<Result<std::vector<domain::Event>>(BatchState&)>;
  explicit Member(Plan p) : plan(std::move(p)) {}

  // Plans this call's events against the batch's state (which includes the
  // events of the members ahead of it). An error fails this member only.
  Plan plan;
  // Planned after `plan`'s events are folded, in the same transaction, its
  // events following them (an outcome, then the object its PATCH returned).
  // An error there drops the follow-up only: the next pass records it.
  Plan follow_up;
  std::vector<domain::Event> events;  // as appended: seq and recorded_at set
  // Runs in the batch's transaction after the rows are inserted (retention
  // removes what its `pruned` row covers); an exception fails the batch.
  std::function<void(SQLite::Database&)> in_transaction;
  Status status;
  bool done = false;  // under queue_mu_
  std::condition_variable cv;
};

// What one batch did, for the stats.
struct Journal::BatchOutcome {
  bool committed = false;
  bool failed = false;
  size_t events = 0;
};

// The events of [from_seq, until_seq] in `db` (the journal's connection or
// retention's reader), in order, as Journal::ForEachEvent gives them.
Status ForEachEventIn(SQLite::Database& db, const std::string& path, int64_t from_seq,
                      int64_t until_seq, const std::function<Status(const domain::Event&)>& fn);

// Writes every record of `s` into the projection tables of `db` (an archive
// file's, whose subjects are not the journal's: the subject column stays NULL).
void WriteAllProjections(SQLite::Database& db, const domain::JournalState& s);

}  // namespace fk::journal
