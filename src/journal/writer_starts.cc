// Journal::RecordWriterStart and WriterStarts: which `run` process appended
// which rows (migrations/0008_writer_starts.sql).
#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json.hpp>

#include "journal/group_commit.h"
#include "journal/journal.h"
#include "journal/sqlite_status.h"

namespace fk::journal {

Status Journal::RecordWriterStart(const std::string& writer,
                                  const domain::Enforcement& enforcement) {
  // The start is a chained row of the journal (schema 11), so the hash chain
  // proves which enforcement was in force; writer_starts, which attributes
  // every later row to this writer, is written in the same transaction from
  // the row as appended (its seq and time) and checked against it by
  // `journal verify` and verify_chain.sql.
  Member member([&](BatchState&) -> Result<std::vector<domain::Event>> {
    domain::Event e;
    e.name = writer;
    e.body = domain::WriterStarted{writer, enforcement};
    return std::vector<domain::Event>{e};
  });
  member.in_transaction = [&](SQLite::Database& db) {
    const domain::Event& started = member.events.front();
    SQLite::Statement insert(db,
                             "INSERT INTO writer_starts (first_seq, writer, started_at, "
                             "enforcement, dry_run_namespaces, chained) VALUES (?, ?, ?, ?, ?, 1)");
    insert.bind(1, started.seq);
    insert.bind(2, writer);
    insert.bind(3, started.recorded_at);
    insert.bind(4, enforcement.Mode());
    boost::json::array namespaces;
    for (const std::string& ns : enforcement.dry_run_namespaces) namespaces.emplace_back(ns);
    insert.bind(5, boost::json::serialize(namespaces));
    insert.exec();
  };
  return Submit(member).WithContext("cannot record the start of writer " + writer + " in journal " +
                                    Quote(path_));
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
