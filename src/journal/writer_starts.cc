// Journal::RecordWriterStart and WriterStarts: which `run` process appended
// which rows (migrations/0008_writer_starts.sql).
#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json.hpp>

#include "common/clock.h"
#include "journal/group_commit.h"
#include "journal/journal.h"
#include "journal/sqlite_status.h"

namespace fk::journal {

Status Journal::RecordWriterStart(const std::string& writer,
                                  const domain::Enforcement& enforcement) {
  std::lock_guard db_lock(db_mu_);
  try {
    SQLite::Transaction tx(impl_->db, SQLite::TransactionBehavior::IMMEDIATE);
    // The last seq on disk, not the row's: a compact row covers several seqs.
    const int64_t last = impl_->db.execAndGet(kMaxSeqSql).getInt64();
    SQLite::Statement insert(impl_->db,
                             "INSERT INTO writer_starts (first_seq, writer, started_at, "
                             "enforcement, dry_run_namespaces) VALUES (?, ?, ?, ?, ?)");
    insert.bind(1, last + 1);
    insert.bind(2, writer);
    insert.bind(3, FormatRfc3339(impl_->clock->Now()));
    insert.bind(4, enforcement.Mode());
    boost::json::array namespaces;
    for (const std::string& ns : enforcement.dry_run_namespaces) namespaces.emplace_back(ns);
    insert.bind(5, boost::json::serialize(namespaces));
    insert.exec();
    tx.commit();
    wrote_since_checkpoint_ = true;
    return Status::Ok();
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot record the start of writer " + writer + " in journal " + Quote(path_),
                      e);
  }
}

Result<std::map<int64_t, std::string>> Journal::WriterStarts() const {
  std::lock_guard db_lock(db_mu_);
  std::map<int64_t, std::string> starts;
  try {
    if (!impl_->db.tableExists("writer_starts")) return starts;  // before schema 8
    SQLite::Statement q(impl_->db,
                        "SELECT first_seq, writer FROM writer_starts ORDER BY first_seq, start");
    while (q.executeStep()) starts[q.getColumn(0).getInt64()] = q.getColumn(1).getString();
    return starts;
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot read the writer starts of journal " + Quote(path_), e);
  }
}

}  // namespace fk::journal
