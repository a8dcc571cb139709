// The durable SQLite journal (docs/design.md#the-journal-contract).
//
// One Journal object owns one connection to one file and is the only writer
// (the process must be the only fencekeeper writing the file; a concurrent
// writer is detected and refused). Every Append is one BEGIN IMMEDIATE
// transaction that inserts the events, updates the projection tables, and is
// durable on return (WAL + synchronous=FULL): a transition intent is on disk
// before the PATCH it announces is sent.
//
// Thread-safe, with group commit (in the manner of LevelDB's DBImpl::Write):
// Append, Record, RecordOutcome and Forget may be called from many threads at
// once. Callers queue; the caller at the front commits itself and every
// caller queued behind it as one batch — one transaction, one fsync — while
// later callers queue for the next batch. A batch closes when the writer is
// free: no timer, so an idle journal adds no latency. Each call returns only
// once the transaction holding its own events is durable, so an intent is
// still on disk before the PATCH it announces is sent. Within a batch each
// call is planned against the committed state plus the events of the calls
// ahead of it (two sandboxes seeing one new fence generation record it once;
// seqs stay contiguous). A call whose own planning fails (an outcome for an
// unknown intent) fails alone; a batch whose commit fails fails every call in
// it, appends nothing, and leaves state() unchanged. Read() never sees an
// event before its commit. Checkpoint, ForEachEvent and IntegrityCheck take
// the connection in turn with the batches: SQLite is never used by two
// threads at once.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "domain/enforcement.h"
#include "domain/event.h"
#include "domain/journal_state.h"
#include "domain/plan.h"
#include "journal/chain.h"
#include "journal/journal_writer.h"
#include "journal/space.h"

namespace fk::journal {

struct OpenOptions {
  // Read-only opens never create, migrate or write (replay, audit, backup source).
  bool read_only = false;
  int busy_timeout_ms = 5000;
  const TimeSource* clock = nullptr;  // defaults to the system clock
  // Every checkpoint that resets the WAL truncates it to this size (PRAGMA
  // journal_size_limit): without it a WAL keeps the size of its largest burst.
  int64_t wal_size_limit_bytes = 4 << 20;
  // Caps the file at this many pages (PRAGMA max_page_count); 0 = no cap.
  // Appends past the cap fail like a full disk, which is how tests make one.
  int64_t max_page_count = 0;
  // The SQLite VFS to open the file through ("" = the default). Tests
  // register fault-injecting VFSes (disk full, I/O errors, power loss).
  std::string vfs;
  // Fault injection (the deterministic simulation): consulted before every
  // batch that has something to append (by the thread committing it);
  // returning true makes that batch fail as an I/O error would, changing
  // nothing. With one caller at a time, a batch is one call.
  std::function<bool()> refuse_writes;
  // A writable open keeps a reserve file of at least this many bytes beside
  // the journal (space.h), grown to ReserveFor(the volume, its sandboxes)
  // as sandboxes come; 0 = none. `run` starts from ReserveFor(its volume).
  int64_t reserve_bytes = 0;
  // The free space of the journal's volume (tests inject one); default statvfs.
  std::function<Result<VolumeSpace>()> volume_space;
  // At most this many calls are committed in one group-commit batch; the
  // rest form the next one. Bounds one transaction's size and the time its
  // first caller waits (LevelDB caps a group likewise).
  size_t max_batch_calls = 128;
  // SQLite's page cache per connection, in KiB (PRAGMA cache_size = -N).
  // SQLite's default, 2,000 KiB, would be 160 bytes of every sandbox's share
  // of the process at 10,000 sandboxes. A batch touches a few
  // pages per row it writes; pages that fall out are re-read from the OS's
  // page cache, not the disk.
  int cache_kib = 512;
};

// What a file on disk is, found without changing a byte of it.
struct FileInfo {
  bool exists = false;
  bool empty = false;  // no bytes, or an SQLite database with no schema and no application_id
  int32_t application_id = 0;
  int32_t user_version = 0;
};

// Inspects `path`. Refuses (kRefused) a file that is not an SQLite database, a
// non-empty database whose application_id is not fencekeeper's, or one whose
// schema is newer than this binary knows.
Result<FileInfo> InspectJournalFile(const std::string& path);

class BatchState;

// One step of retention (Journal::Prune): the oldest rows recorded before
// `cutoff_ms`, at most `max_rows` of them, in one transaction.
struct PruneOptions {
  int64_t cutoff_ms = 0;
  size_t max_rows = 1000;
  // Fewer rows than this are left for a later step unless the oldest is
  // `overdue_ms` past the cutoff: each step costs a `pruned` row (and an
  // archive file), so a trickle is gathered into batches.
  size_t min_rows = 1;
  int64_t overdue_ms = 0;
  // Write the rows to a sealed SQLite file here before removing them ("" = none).
  std::string archive_dir;
};

struct PruneReport {
  int64_t rows = 0;  // rows removed (0: nothing was due)
  int64_t first_seq = 0, last_seq = 0;
  std::string archive;  // the archive file written (its path)
  // A pending or refused intent recorded before the cutoff holds the cut
  // back (its seq; 0: none): the state needs its row.
  int64_t held_by = 0;
  int64_t subjects_removed = 0;
};

// Counters of the group commit, for metrics and benchmarks.
struct JournalStats {
  uint64_t commits = 0;         // transactions committed: one WAL fsync each
  uint64_t failed_commits = 0;  // batches whose transaction failed (every call in it failed)
  uint64_t batches = 0;         // batches led, including those with nothing to append
  uint64_t calls = 0;           // calls served by those batches
  uint64_t events = 0;          // events committed
  uint64_t largest_batch = 0;   // most calls in one batch
  uint64_t queued = 0;          // calls queued or being committed right now
  std::map<std::string, uint64_t> events_by_kind;  // events committed, by EventKind name
};

class Journal final : public JournalWriter {
 public:
  // Creates (mode 0600) and migrates a missing or empty file, upgrades an older
  // journal, and refuses anything else with a message naming the file.
  static Result<std::unique_ptr<Journal>> Open(const std::string& path,
                                               const OpenOptions& options = {});
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  const std::string& path() const override { return path_; }
  int schema_version() const { return schema_version_; }
  // State folded from every event so far (loaded from the projections on open).
  // Only for a caller that is the sole user of the journal (replay, tests):
  // with concurrent writers, read through Read().
  const domain::JournalState& state() const { return state_; }
  // Read(fn) (JournalWriter) runs `fn` under the state's shared lock.

  // Appends `events` atomically and durably, assigning seq and recorded_at.
  // On error nothing is appended and state() is unchanged.
  Result<std::vector<domain::Event>> Append(std::vector<domain::Event> events);

  // Records one evaluation (plan_events + Append). Unchanged evaluations append nothing.
  Result<Recorded> Record(const domain::Evaluation& evaluation) override;

  // JournalWriter::RecordOutcome, on SQLite.
  Result<int64_t> RecordOutcome(int64_t intent_seq, const domain::SuspendOutcome& outcome,
                                const domain::IntentRecord* known = nullptr,
                                const domain::Evaluation* observed = nullptr) override;

  // Intent `seq` and its latest outcome (none: still pending), read from the
  // events (either schema); nullopt when `seq` is not an intent of this journal.
  Result<std::optional<FoundIntent>> FindIntent(int64_t seq) const override;

  // The sandbox with this uid is gone from the cluster: appends, in one
  // transaction, `superseded` for each of its pending intents and a
  // `forgotten` event, and drops it from the projections and state(). Its
  // events stay. Returns the number of events appended (0 for an unknown uid).
  Result<size_t> Forget(const std::string& uid, const std::string& detail) override;

  // Checkpoints the WAL into the main file and truncates it to zero bytes
  // (wal_checkpoint(TRUNCATE)); call when idle. Does nothing when nothing was
  // written since the last one. Returns kBusy at once (never waits) when a
  // reader holds an older snapshot: the next idle moment tries again.
  Status Checkpoint() override;

  // Calls `fn` for each event with from_seq <= seq <= until_seq, in order.
  // A row that does not decode stops the walk with kCorruption naming its seq.
  // `fn` must not call back into the journal (it runs holding the connection).
  Status ForEachEvent(int64_t from_seq, int64_t until_seq,
                      const std::function<Status(const domain::Event&)>& fn) const;

  // PRAGMA integrity_check: "ok", or the problems it lists. Costs O(file).
  Result<std::string> IntegrityCheck() const;

  JournalStats stats() const;

  // The volume's space, and the reserve: sheds non-essential rows while the
  // volume is short (free space below twice the reserve, or the reserve given
  // up), takes the reserve back and stops shedding once there is room for
  // it and as much again. Call it regularly (run: every minute and at every
  // scrape); a write that finds the volume full gives the reserve up at once.
  SpaceStatus CheckSpace();
  bool shedding() const { return shedding_.load(); }

  // Retention: removes the oldest rows `options` makes due, writing them to
  // an archive file first if asked, folding them into the base state and
  // appending a `pruned` row, in one transaction that queues with the
  // appends (docs/retention.md). Rows a pending or refused intent needs stay.
  // An archive that cannot be written removes nothing (kIOError).
  Result<PruneReport> Prune(const PruneOptions& options);

  // What the removed events fold to (base_state.h): the state fold() starts
  // from when it replays what is retained.
  Result<domain::JournalState> BaseState() const;

  // The last chained row (seq 0 and kGenesis before the first): logged and
  // exported so that a copy of it lives off the volume (docs/journal-chain.md).
  chain::Head ChainHead() const;

  // Records that the `run` process with writer id `writer` starts appending
  // (writer_starts, schema 8): the rows from the journal's last seq + 1 on
  // are its own until the next start. Call once the writer lock is held and
  // before the first append. `enforcement` is recorded with it (schema 11).
  Status RecordWriterStart(const std::string& writer, const domain::Enforcement& enforcement = {});

  // Every recorded start, first_seq -> writer id (where two starts share a
  // first_seq, the later one: the earlier appended nothing). Empty for a
  // journal of an older schema.
  Result<std::map<int64_t, std::string>> WriterStarts() const;

 protected:
  void ReadState(const std::function<void(const domain::JournalState&)>& fn) const override {
    std::shared_lock lock(state_mu_);
    fn(state_);
  }

 private:
  struct Impl;
  struct Member;  // one call waiting in the group-commit queue (group_commit.cc)
  struct BatchOutcome;
  Journal(std::string path, std::unique_ptr<Impl> impl);
  Status LoadState();
  Result<domain::RefusedIntent> LoadRefused(int64_t seq, const domain::JournalState& base) const;
  Result<domain::RefusedIntent> RefusedFromBase(int64_t seq,
                                                const domain::JournalState& base) const;
  Result<std::optional<FoundIntent>> FindIntentLocked(int64_t seq) const;
  Status ForEachEventLocked(int64_t from_seq, int64_t until_seq,
                            const std::function<Status(const domain::Event&)>& fn) const;
  // Queues `member` and returns once its batch is committed (or failed).
  Status Submit(Member& member);
  BatchOutcome CommitBatch(const std::vector<Member*>& batch);
  Status WriteBatch(const BatchState& batch, const std::vector<Member*>& members);
  Status WriteRows(const BatchState& batch, const std::vector<Member*>& members);
  struct PrunePlan;
  Result<PrunePlan> PlanPrune(const PruneOptions& options) const;
  Status CommitPrune(const PrunePlan& plan, const std::string& archive, PruneReport& report);
  // Space (journal.cc), under db_mu_: grows the reserve for `sandboxes`;
  // starts or stops shedding; after a write found the volume full, makes
  // room for one more try (whether to try).
  void SizeReserve(size_t sandboxes);
  void SetShedding(bool on);
  bool MakeRoom();
  int CheckpointWal(int mode);
  void GiveBackFreePages();

  std::string path_;
  std::unique_ptr<Impl> impl_;
  std::function<bool()> refuse_writes_;
  size_t max_batch_calls_ = 128;
  std::unique_ptr<SpaceReserve> reserve_;  // under db_mu_
  size_t reserve_covers_ = 0;              // sandboxes the reserve is sized for; under db_mu_
  std::function<Result<VolumeSpace>()> volume_space_;
  std::atomic<bool> shedding_{false};
  int busy_timeout_ms_ = 0;
  int schema_version_ = 0;
  // The connection: held by the batch being committed, a checkpoint or a read.
  mutable std::mutex db_mu_;
  // Under db_mu_. Unknown at open: a previous run may have left a WAL.
  bool wrote_since_checkpoint_ = true;
  // The group-commit queue: its front member leads the next batch.
  mutable std::mutex queue_mu_;
  std::deque<Member*> queue_;
  JournalStats stats_;                  // under queue_mu_
  mutable std::shared_mutex state_mu_;  // readers share it; merging a commit takes it alone
  // Written only by the leader of a batch (one at a time), under state_mu_.
  domain::JournalState state_;
};

}  // namespace fk::journal
