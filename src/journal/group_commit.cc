// Group commit: the queue of calls and the one transaction per batch
// (journal.h says what callers can rely on).
#include "journal/group_commit.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <exception>
#include <iterator>

#include <boost/json.hpp>

#include "journal/chain.h"
#include "journal/codec.h"
#include "journal/compact.h"
#include "journal/sqlite_status.h"
#include "journal/text_bound.h"

namespace fk::journal {
using namespace fk::domain;

namespace {

// One row of `journal` for each group of `events` (compact.h), each chained
// to the one before (chain.h); `head` moves to the last.
void InsertRows(SQLite::Statement& insert, BatchSubjects& subjects,
                const std::vector<Event>& events, chain::Head& head) {
  for (size_t i = 0; i < events.size();) {
    compact::RowKind kind{};
    const size_t n = compact::GroupAt(events, i, &kind);
    const Event& e = events[i];
    const int64_t at = compact::ParseRecordedAt(e.recorded_at);
    const auto* observed = std::get_if<SandboxObserved>(&e.body);
    const Subject& subject = subjects.For(e, observed ? &observed->snapshot : nullptr, at);
    boost::json::object base;
    if (!subject.base.empty()) base = boost::json::parse(subject.base).as_object();
    insert.reset();
    insert.clearBindings();
    insert.bind(1, e.seq);
    insert.bind(2, at);
    insert.bind(3, static_cast<int>(kind));
    insert.bind(4, subject.id);
    if (e.ref_seq != 0) insert.bind(5, e.ref_seq);
    const std::string body = compact::EncodeBody(kind, &e, base, at);
    insert.bind(6, body);
    chain::RowText row{e.seq,  at,    static_cast<int>(kind), std::nullopt, e.ns,
                       e.name, e.uid, subject.base,           body};
    if (e.ref_seq != 0) row.ref = e.ref_seq;
    head = {e.seq, chain::RowHash(head.hash, row)};
    const std::string hash = chain::HexToBytes(head.hash);
    insert.bind(7, hash.data(), static_cast<int>(hash.size()));
    insert.exec();
    i += n;
  }
}

void WriteFence(SQLite::Statement& fence, const FenceRecord& r, int64_t subject) {
  fence.reset();
  fence.clearBindings();
  fence.bind(1, r.ns);
  fence.bind(2, r.policy);
  fence.bind(3, r.observation.present ? 1 : 0);
  fence.bind(4, r.observation.uid);
  fence.bind(5, r.observation.generation);
  fence.bind(6, r.observation.intact ? 1 : 0);
  fence.bind(7, r.seq);
  fence.bind(8, r.updated_at);
  if (subject != 0) fence.bind(9, subject);
  fence.exec();
}

void WriteSandbox(SQLite::Statement& sandbox, const SandboxRecord& r, int64_t subject) {
  sandbox.reset();
  sandbox.clearBindings();
  sandbox.bind(1, r.uid.str());  // bound as copies (SQLITE_TRANSIENT)
  sandbox.bind(2, r.ns.str());
  sandbox.bind(3, r.name.str());
  if (r.decision) {
    sandbox.bind(4, ToString(r.decision->verdict));
    sandbox.bind(5, ToString(r.decision->reason));
    sandbox.bind(6, ToString(r.decision->action));
    sandbox.bind(10, EncodeDecision(*r.decision));
    sandbox.bind(11, r.decision_seq);
  }
  if (r.observation) {
    sandbox.bind(7, r.observation->sandbox.generation);
    sandbox.bind(8, EncodeSnapshot(*r.observation));
    sandbox.bind(9, r.observation_seq);
  }
  // Observed before this batch: the committed state kept only the digest, and
  // the row keeps the observation it has.
  sandbox.bind(17, r.observed && !r.observation ? 1 : 0);
  if (r.history.pending_intent_seq) sandbox.bind(12, *r.history.pending_intent_seq);
  if (r.history.applied_generation) sandbox.bind(13, *r.history.applied_generation);
  if (r.history.dry_run_generation) sandbox.bind(18, *r.history.dry_run_generation);
  sandbox.bind(14, r.updated_at.str());
  if (r.refused) sandbox.bind(15, r.refused->intent.seq);
  if (subject != 0) sandbox.bind(16, subject);
  sandbox.exec();
}

// Rewrites the projection rows of every record the batch changed.
void WriteProjections(BatchStatements& st, const BatchState& batch, BatchSubjects& subjects) {
  for (const auto& key : batch.changed_fences())
    WriteFence(st.upsert_fence, batch.scratch().fences.at(key),
               subjects.IdOf({key.first, key.second, ""}));
  for (const std::string& uid : batch.changed_sandboxes()) {
    if (auto it = batch.scratch().sandboxes.find(uid); it != batch.scratch().sandboxes.end()) {
      const SandboxRecord& r = it->second;
      WriteSandbox(st.upsert_sandbox, r, subjects.IdOf({r.ns.str(), r.name.str(), r.uid.str()}));
    } else {  // forgotten
      st.delete_sandbox.reset();
      st.delete_sandbox.bind(1, uid);
      st.delete_sandbox.exec();
    }
  }
}

int64_t MaxSeq(SQLite::Statement& max_seq) {
  max_seq.reset();
  max_seq.executeStep();
  const int64_t seq = max_seq.getColumn(0).getInt64();
  max_seq.reset();  // a statement left on a row would hold a read transaction open
  return seq;
}

}  // namespace

BatchStatements::BatchStatements(SQLite::Database& db)
    : max_seq(db, kMaxSeqSql),
      insert_row(
          db,
          "INSERT INTO journal (seq, at, kind, subject, ref, body, hash) VALUES (?,?,?,?,?,?,?)"),
      insert_subject(db,
                     "INSERT INTO subjects (namespace, name, uid, base) VALUES (?,?,?,?) "
                     "RETURNING id"),
      select_row(db, "SELECT namespace, name, uid, COALESCE(base, '') FROM subjects WHERE id = ?"),
      upsert_fence(db,
                   "INSERT OR REPLACE INTO fence_projection (namespace, policy, present, "
                   "policy_uid, generation, intact, seq, updated_at, subject) "
                   "VALUES (?,?,?,?,?,?,?,?,?)"),
      upsert_sandbox(db,
                     "INSERT INTO sandbox_projection (sandbox_uid, namespace, name, "
                     "verdict, reason, action, observed_generation, observation, "
                     "observation_seq, decision, decision_seq, pending_intent_seq, "
                     "applied_generation, updated_at, refused_intent_seq, subject, "
                     "dry_run_generation) "
                     "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?18) "
                     "ON CONFLICT (sandbox_uid) DO UPDATE SET namespace = excluded.namespace, "
                     "name = excluded.name, verdict = excluded.verdict, "
                     "reason = excluded.reason, action = excluded.action, "
                     "observed_generation = IIF(?17, observed_generation, "
                     "excluded.observed_generation), "
                     "observation = IIF(?17, observation, excluded.observation), "
                     "observation_seq = IIF(?17, observation_seq, excluded.observation_seq), "
                     "decision = excluded.decision, decision_seq = excluded.decision_seq, "
                     "pending_intent_seq = excluded.pending_intent_seq, "
                     "applied_generation = excluded.applied_generation, "
                     "updated_at = excluded.updated_at, "
                     "refused_intent_seq = excluded.refused_intent_seq, "
                     "subject = excluded.subject, "
                     "dry_run_generation = excluded.dry_run_generation"),
      delete_sandbox(db, "DELETE FROM sandbox_projection WHERE sandbox_uid = ?") {}

Status Journal::Submit(Member& member) {
  std::unique_lock lock(queue_mu_);
  queue_.push_back(&member);
  member.cv.wait(lock, [&] { return member.done || queue_.front() == &member; });
  if (member.done) return member.status;  // an earlier leader committed it

  // This member leads: it commits itself and the members queued behind it,
  // up to the cap. The others, and members arriving meanwhile, queue for the
  // next batch.
  // Short of space, smaller batches: one batch's pages go to the WAL before
  // the checkpoint that lets the WAL be reused (space.h, kReserveWal).
  const size_t cap = shedding_ ? std::min(max_batch_calls_, kShortBatchCalls) : max_batch_calls_;
  const size_t n = std::min(queue_.size(), cap);
  const std::vector<Member*> batch(queue_.begin(), queue_.begin() + static_cast<std::ptrdiff_t>(n));
  lock.unlock();
  BatchOutcome outcome;
  try {
    outcome = CommitBatch(batch);
  } catch (const std::exception& e) {  // never leave the queue without a leader
    for (Member* m : batch) m->status = Status::Internal(std::string("journal batch: ") + e.what());
    outcome.failed = true;
  }
  lock.lock();
  stats_.batches += 1;
  stats_.calls += batch.size();
  stats_.commits += outcome.committed ? 1 : 0;
  stats_.failed_commits += outcome.failed ? 1 : 0;
  stats_.events += outcome.committed ? outcome.events : 0;
  stats_.largest_batch = std::max<uint64_t>(stats_.largest_batch, batch.size());
  if (outcome.committed) {
    for (const Member* m : batch)
      if (m->status.ok())
        for (const Event& e : m->events) ++stats_.events_by_kind[ToString(e.kind())];
  }
  for (Member* m : batch) {
    queue_.pop_front();
    m->done = true;
    if (m != &member) m->cv.notify_one();
  }
  if (!queue_.empty()) queue_.front()->cv.notify_one();  // the next leader
  return member.status;
}

Journal::BatchOutcome Journal::CommitBatch(const std::vector<Member*>& batch) {
  std::lock_guard db_lock(db_mu_);
  // No other thread writes state_ while this leader runs: reading it unlocked is safe.
  BatchState state(state_);
  const std::string now = FormatRfc3339(impl_->clock->Now());
  BatchOutcome outcome;
  // Numbers, stamps and folds events[from..], so what is planned next sees them.
  auto fold_from = [&](std::vector<Event>& events, size_t from) {
    for (size_t i = from; i < events.size(); ++i) {
      Event& e = events[i];
      BoundEventText(e);
      e.seq = state.scratch().last_seq + 1;
      e.recorded_at = now;
      state.Fold(e);
    }
  };
  for (Member* m : batch) {
    auto planned = m->plan(state);
    if (!planned.ok()) {
      m->status = planned.status();
      continue;
    }
    m->events = std::move(*planned);
    fold_from(m->events, 0);
    if (m->follow_up) {
      auto more = m->follow_up(state);
      const size_t first = m->events.size();
      if (more.ok()) {
        m->events.insert(m->events.end(), std::make_move_iterator(more->begin()),
                         std::make_move_iterator(more->end()));
      }
      fold_from(m->events, first);
    }
    outcome.events += m->events.size();
  }
  if (outcome.events == 0) return outcome;  // nothing to commit: no transaction, no fsync

  if (Status s = WriteBatch(state, batch); !s.ok()) {
    for (Member* m : batch) {
      if (m->status.ok()) m->status = s;
    }
    outcome.failed = true;
    return outcome;
  }
  {
    std::unique_lock state_lock(state_mu_);
    std::move(state).MergeInto(state_);
  }
  wrote_since_checkpoint_ = true;
  SizeReserve(state_.sandboxes.size());
  outcome.committed = true;
  return outcome;
}

// One transaction: every member's events, then the projections they change.
// A volume found full gives the reserve up, or restarts the WAL, and tries
// again (space.h): at most twice.
Status Journal::WriteBatch(const BatchState& batch, const std::vector<Member*>& members) {
  if (refuse_writes_ && refuse_writes_())
    return Status::IOError(path_ + ": write refused (injected fault)");
  for (int attempt = 0;; ++attempt) {
    try {
      return WriteRows(batch, members);
    } catch (const SQLite::Exception& e) {
      const bool full = (e.getErrorCode() & 0xff) == SQLITE_FULL;
      if (full && attempt < 2 && MakeRoom()) continue;
      return FromSqlite("cannot append to journal " + Quote(path_), e);
    }
  }
}

// The transaction itself: committed, kBusy (another writer appended), or
// SQLite::Exception (rolled back).
Status Journal::WriteRows(const BatchState& batch, const std::vector<Member*>& members) {
  auto& db = impl_->db;
  SQLite::Transaction tx(db, SQLite::TransactionBehavior::IMMEDIATE);
  if (!impl_->statements) impl_->statements = std::make_unique<BatchStatements>(db);
  BatchStatements& st = *impl_->statements;
  const int64_t on_disk = MaxSeq(st.max_seq);
  if (on_disk != state_.last_seq) {
    return Status::Busy("journal " + Quote(path_) + " was written by another process (last seq " +
                        std::to_string(on_disk) + ", expected " + std::to_string(state_.last_seq) +
                        "); only one fencekeeper may write a journal");
  }
  BatchSubjects subjects(impl_->subjects, st.insert_subject, st.select_row);
  chain::Head head = impl_->head;
  for (const Member* m : members) {
    if (m->status.ok()) InsertRows(st.insert_row, subjects, m->events, head);
  }
  for (const Member* m : members) {
    if (m->status.ok() && m->in_transaction) m->in_transaction(db);
  }
  WriteProjections(st, batch, subjects);
  tx.commit();
  subjects.MergeInto(impl_->subjects);
  impl_->head = std::move(head);
  return Status::Ok();
}

void WriteAllProjections(SQLite::Database& db, const domain::JournalState& s) {
  BatchStatements st(db);
  for (const auto& [key, r] : s.fences) WriteFence(st.upsert_fence, r, 0);
  for (const auto& [uid, r] : s.sandboxes) WriteSandbox(st.upsert_sandbox, r, 0);
}

chain::Head Journal::ChainHead() const {
  std::lock_guard db_lock(db_mu_);
  return impl_->head;
}

JournalStats Journal::stats() const {
  std::lock_guard lock(queue_mu_);
  JournalStats stats = stats_;
  stats.queued = queue_.size();
  return stats;
}

}  // namespace fk::journal
