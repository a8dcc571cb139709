// Retention (docs/retention.md): the oldest rows go, a step at a time, each
// step one transaction queued with the appends — archived first when asked,
// folded into the base state, and recorded by a chained `pruned` row.
#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <limits>
#include <set>

#include "domain/fold.h"
#include "journal/archive.h"
#include "journal/base_state.h"
#include "journal/chain.h"
#include "journal/compact.h"
#include "journal/group_commit.h"
#include "journal/sqlite_status.h"

namespace fk::journal {
using namespace fk::domain;

// What one step removes, found under the connection and then committed.
struct Journal::PrunePlan {
  ArchiveContent content;  // the rows, their subjects and the range (archive.h)
  domain::JournalState base_before, base_after;
  std::set<int64_t> subjects;  // named by the rows removed: candidates to go too
  int64_t held_by = 0;
  int64_t first_at_ms = 0, last_at_ms = 0;
};

namespace {

// The lowest seq the state needs a row of: pending and refused intents.
int64_t NeededFrom(const JournalState& s) {
  int64_t needed = std::numeric_limits<int64_t>::max();
  if (!s.pending_intents.empty()) needed = s.pending_intents.begin()->first;
  for (const auto& [uid, r] : s.sandboxes)
    if (r.refused) needed = std::min(needed, r.refused->intent.seq);
  return needed;
}

// Takes rows from the front while they are due and not needed.
struct RowTaker {
  const PruneOptions& options;
  int64_t needed;
  int64_t held_by = 0;
  bool stopped = false;
  // Whether the row [seq, last] recorded at `at_ms` goes.
  bool Take(int64_t last, int64_t at_ms, size_t taken) {
    if (stopped || taken >= options.max_rows || at_ms >= options.cutoff_ms)
      return !(stopped = true);
    if (last >= needed) {
      held_by = needed;
      return !(stopped = true);
    }
    return true;
  }
};

// The range grows by the row [seq, last] recorded at `at`.
void Extend(ArchiveRange& range, int64_t seq, int64_t last, int64_t at, int64_t& first_at,
            int64_t& last_at) {
  if (range.first_seq == 0) {
    range.first_seq = seq;
    first_at = at;
  }
  range.last_seq = last;
  last_at = at;
}

void TakeLegacyRows(SQLite::Database& db, RowTaker& taker, ArchiveContent& c, int64_t& first_at,
                    int64_t& last_at) {
  SQLite::Statement q(db,
                      "SELECT seq, recorded_at, kind, namespace, name, uid, ref_seq, payload "
                      "FROM events_v1 ORDER BY seq LIMIT ?");
  q.bind(1, static_cast<int64_t>(taker.options.max_rows));
  while (q.executeStep()) {
    const int64_t seq = q.getColumn(0).getInt64();
    const int64_t at = compact::ParseRecordedAt(q.getColumn(1).getString());
    if (!taker.Take(seq, at, c.legacy.size())) break;
    LegacyRow r{
        seq,
        q.getColumn(1).getString(),
        q.getColumn(2).getString(),
        q.getColumn(3).getString(),
        q.getColumn(4).getString(),
        q.getColumn(5).getString(),
        q.getColumn(6).isNull() ? std::nullopt : std::optional<int64_t>(q.getColumn(6).getInt64()),
        q.getColumn(7).getString()};
    c.legacy.push_back(std::move(r));
    Extend(c.range, seq, seq, at, first_at, last_at);
  }
}

void TakeCompactRows(SQLite::Database& db, RowTaker& taker, ArchiveContent& c, int64_t& first_at,
                     int64_t& last_at) {
  SQLite::Statement q(db, "SELECT seq, at, kind, subject, ref, body, " + chain::HexSql("hash") +
                              " FROM journal ORDER BY seq LIMIT ?");
  q.bind(1, static_cast<int64_t>(taker.options.max_rows));
  while (q.executeStep()) {
    const int64_t seq = q.getColumn(0).getInt64();
    const int kind = q.getColumn(2).getInt();
    const int64_t last =
        seq + static_cast<int64_t>(compact::EventsIn(static_cast<compact::RowKind>(kind))) - 1;
    const int64_t at = q.getColumn(1).getInt64();
    if (!taker.Take(last, at, c.legacy.size() + c.rows.size())) break;
    CompactRow r{
        seq,
        at,
        kind,
        q.getColumn(3).getInt64(),
        q.getColumn(4).isNull() ? std::nullopt : std::optional<int64_t>(q.getColumn(4).getInt64()),
        q.getColumn(5).getString(),
        q.getColumn(6).isNull() ? std::string() : q.getColumn(6).getString()};
    Extend(c.range, seq, last, at, first_at, last_at);
    c.range.head_seq = r.hash.empty() ? c.range.head_seq : seq;
    c.range.head_hash = r.hash.empty() ? c.range.head_hash : r.hash;
    c.rows.push_back(std::move(r));
  }
}

void TakeSubjects(SQLite::Database& db, ArchiveContent& c, std::set<int64_t>& ids) {
  for (const CompactRow& r : c.rows) ids.insert(r.subject);
  SQLite::Statement q(db, "SELECT id, namespace, name, uid, base FROM subjects WHERE id = ?");
  for (int64_t id : ids) {
    q.reset();
    q.bind(1, id);
    if (!q.executeStep()) continue;
    c.subjects.push_back(
        {id, q.getColumn(1).getString(), q.getColumn(2).getString(), q.getColumn(3).getString(),
         q.getColumn(4).isNull() ? std::nullopt
                                 : std::optional<std::string>(q.getColumn(4).getString())});
  }
}

// Journals older than schema 8 have no such table; their archives get none.
void TakeWriterStarts(SQLite::Database& db, ArchiveContent& c) {
  if (!db.tableExists("writer_starts")) return;
  SQLite::Statement q(db,
                      "SELECT start, first_seq, writer, started_at, enforcement, "
                      "dry_run_namespaces, chained FROM writer_starts "
                      "WHERE first_seq <= ? ORDER BY start");
  q.bind(1, c.range.last_seq);
  while (q.executeStep())
    c.writer_starts.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getInt64(),
                               q.getColumn(2).getString(), q.getColumn(3).getString(),
                               q.getColumn(4).getString(), q.getColumn(5).getString(),
                               q.getColumn(6).getInt() != 0});
}

}  // namespace

Result<Journal::PrunePlan> Journal::PlanPrune(const PruneOptions& options) const {
  const int64_t needed = Read([](const JournalState& s) { return NeededFrom(s); });
  std::lock_guard reader_lock(impl_->reader_mu);
  PrunePlan plan;
  try {
    if (!impl_->reader)
      impl_->reader =
          std::make_unique<SQLite::Database>(impl_->path, SQLite::OPEN_READONLY, 0, impl_->vfs);
    auto& db = *impl_->reader;
    // One read transaction: every query of the plan sees the same snapshot.
    SQLite::Transaction snapshot(db, SQLite::TransactionBehavior::DEFERRED);
    auto base = LoadBase(db);
    if (!base.ok()) return base.status();
    plan.base_before = *base;
    ArchiveRange& range = plan.content.range;
    SQLite::Statement cut(db, "SELECT last_pruned, anchor_hash FROM journal_cut");
    cut.executeStep();
    range.anchor_seq = cut.getColumn(0).getInt64();
    range.anchor_hash = cut.getColumn(1).getString();
    cut.reset();
    RowTaker taker{options, needed};
    TakeLegacyRows(db, taker, plan.content, plan.first_at_ms, plan.last_at_ms);
    TakeCompactRows(db, taker, plan.content, plan.first_at_ms, plan.last_at_ms);
    plan.held_by = taker.held_by;
    const size_t rows = plan.content.legacy.size() + plan.content.rows.size();
    range.rows = static_cast<int64_t>(rows);
    const bool overdue = rows > 0 && plan.first_at_ms + options.overdue_ms < options.cutoff_ms;
    if (rows == 0 || (rows < options.min_rows && !overdue)) {
      plan.content = {};
      return plan;
    }
    TakeSubjects(db, plan.content, plan.subjects);
    TakeWriterStarts(db, plan.content);
    JournalState after = *base;
    Status s = ForEachEventIn(db, path_, range.first_seq, range.last_seq, [&](const Event& e) {
      fold(after, e);
      return Status::Ok();
    });
    if (!s.ok()) return s;
    after.last_seq = range.last_seq;
    plan.base_after = std::move(after);
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot plan pruning of journal " + Quote(path_), e);
  }
  return plan;
}

Result<PruneReport> Journal::Prune(const PruneOptions& options) {
  auto plan = PlanPrune(options);
  if (!plan.ok()) return plan.status();
  PruneReport report;
  report.held_by = plan->held_by;
  if (plan->content.range.rows == 0) return report;
  std::string archive;
  if (!options.archive_dir.empty()) {
    // Outside the connection: an fsync of the archive never holds up an append.
    auto written = WriteArchive(options.archive_dir, path_, plan->content, plan->base_before,
                                plan->base_after, *impl_->clock);
    if (!written.ok()) return written.status();
    archive = *written;
  }
  if (Status s = CommitPrune(*plan, archive, report); !s.ok()) return s;
  return report;
}

namespace {

void DeleteRows(SQLite::Database& db, const ArchiveRange& range) {
  SQLite::Statement legacy(db, "DELETE FROM events_v1 WHERE seq BETWEEN ? AND ?");
  legacy.bind(1, range.first_seq);
  legacy.bind(2, range.last_seq);
  legacy.exec();
  SQLite::Statement rows(db, "DELETE FROM journal WHERE seq BETWEEN ? AND ?");
  rows.bind(1, range.first_seq);
  rows.bind(2, range.last_seq);
  rows.exec();
}

// The candidates nothing names any more (the trigger would refuse the others).
int64_t DeleteSubjects(SQLite::Database& db, const std::set<int64_t>& candidates,
                       const std::set<int64_t>& in_memory) {
  SQLite::Statement del(db,
                        "DELETE FROM subjects WHERE id = ?1 "
                        "AND NOT EXISTS (SELECT 1 FROM journal WHERE subject = ?1) "
                        "AND NOT EXISTS (SELECT 1 FROM sandbox_projection WHERE subject = ?1) "
                        "AND NOT EXISTS (SELECT 1 FROM fence_projection WHERE subject = ?1)");
  int64_t removed = 0;
  for (int64_t id : candidates) {
    if (in_memory.contains(id)) continue;
    del.reset();
    del.bind(1, id);
    removed += del.exec();
  }
  return removed;
}

}  // namespace

Status Journal::CommitPrune(const PrunePlan& plan, const std::string& archive,
                            PruneReport& report) {
  const ArchiveRange& range = plan.content.range;
  Pruned pruned{range.first_seq, range.last_seq, range.rows,      plan.first_at_ms,
                plan.last_at_ms, range.head_seq, range.head_hash, ArchiveName(archive)};
  Member member([&](BatchState&) -> Result<std::vector<Event>> {
    if (state_.last_seq < range.last_seq)
      return Status::Internal("pruning planned past the journal's end");
    Event e;
    e.name = "journal";
    e.body = pruned;
    return std::vector<Event>{e};
  });
  member.in_transaction = [&](SQLite::Database& db) {
    DeleteRows(db, range);
    const std::vector<int64_t> ids = impl_->subjects.Ids();
    const std::set<int64_t> in_memory(ids.begin(), ids.end());
    report.subjects_removed = DeleteSubjects(db, plan.subjects, in_memory);
    WriteBase(db, plan.base_before, plan.base_after);
  };
  if (Status s = Submit(member); !s.ok()) return s;
  report.rows = range.rows;
  report.first_seq = range.first_seq;
  report.last_seq = range.last_seq;
  report.archive = archive;
  return Status::Ok();
}

Result<JournalState> Journal::BaseState() const {
  std::lock_guard db_lock(db_mu_);
  try {
    return LoadBase(impl_->db);
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot read the base state of journal " + Quote(path_), e);
  }
}

}  // namespace fk::journal
