#include "journal/journal.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "common/log.h"
#include "domain/fold.h"
#include "journal/base_state.h"
#include "journal/batch_state.h"
#include "journal/codec.h"
#include "journal/compact.h"
#include "journal/group_commit.h"
#include "journal/migrations.h"
#include "journal/read_only.h"
#include "journal/sqlite_status.h"
#include "journal/text_bound.h"

namespace fk::journal {
namespace fs = std::filesystem;
using namespace fk::domain;

namespace {

constexpr char kSqliteMagic[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f',
                                   'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};

// Creates the journal file with mode 0600 before SQLite touches it, so it is
// never readable by others, not even for an instant. The -wal and -shm files
// SQLite makes later copy this mode.
Status CreateFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::IOError("cannot create journal " + Quote(path) + ": " + std::strerror(errno));
  }
  ::close(fd);
  return Status::Ok();
}

using SqliteHeader = std::array<unsigned char, 100>;

// SQLite's 100-byte file header; a file without SQLite's magic string is
// refused before SQLite is let near it.
Result<SqliteHeader> ReadSqliteHeader(const std::string& path) {
  SqliteHeader header{};
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::IOError("cannot read journal " + Quote(path) + ": " + std::strerror(errno));
  in.read(reinterpret_cast<char*>(header.data()), header.size());
  if (in.gcount() != 100 || std::memcmp(header.data(), kSqliteMagic, 16) != 0) {
    return Status::Refused(
        "journal " + Quote(path) +
        " is not an SQLite database (not a fencekeeper journal); refusing to touch it");
  }
  return header;
}

// A header field: SQLite stores them big-endian.
int32_t HeaderInt32(const SqliteHeader& header, size_t offset) {
  return static_cast<int32_t>((uint32_t{header[offset]} << 24) |
                              (uint32_t{header[offset + 1]} << 16) |
                              (uint32_t{header[offset + 2]} << 8) | uint32_t{header[offset + 3]});
}

// A WAL-mode file with no -wal frames beside it: every committed change is in
// the main file, so its header is the truth; and opening a WAL database, even
// read-only, would create -wal and -shm files beside a file that may not be ours.
bool HeaderIsTheTruth(const SqliteHeader& header, const std::string& path) {
  const bool wal_mode = header[18] == 2 && header[19] == 2;
  std::error_code wal_ec;
  const bool wal_has_frames =
      fs::exists(path + "-wal", wal_ec) && fs::file_size(path + "-wal", wal_ec) > 0;
  return wal_mode && !wal_has_frames;
}

void ReadIdentityFromHeader(const SqliteHeader& header, FileInfo& info) {
  info.application_id = HeaderInt32(header, 68);
  info.user_version = HeaderInt32(header, 60);
  const int32_t pages = HeaderInt32(header, 28);
  info.empty = info.application_id == 0 && info.user_version == 0 && pages <= 1;
}

// Asks SQLite itself, read-only, when the header may be behind the -wal file
// (or the file is in rollback mode, where opening it creates nothing).
Status ReadIdentityFromDatabase(const std::string& path, FileInfo& info) {
  try {
    SQLite::Database db(path, SQLite::OPEN_READONLY);
    info.application_id = db.execAndGet("PRAGMA application_id").getInt();
    info.user_version = db.execAndGet("PRAGMA user_version").getInt();
    const int objects = db.execAndGet("SELECT count(*) FROM sqlite_schema").getInt();
    info.empty = objects == 0 && info.application_id == 0 && info.user_version == 0;
  } catch (const SQLite::Exception& e) {
    return Status::Refused("journal " + Quote(path) +
                           " cannot be read as an SQLite database: " + e.what());
  }
  return Status::Ok();
}

// A non-empty database is touched only if it is fencekeeper's and not newer
// than this binary: migrating or writing anything else could destroy it.
Status CheckOwnership(const std::string& path, const FileInfo& info) {
  if (info.application_id != kApplicationId) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08x", static_cast<uint32_t>(info.application_id));
    return Status::Refused("journal " + Quote(path) +
                           " is an SQLite database of another application (application_id " + hex +
                           ", expected fencekeeper's 0x464b4a31); refusing to touch it");
  }
  if (info.user_version > LatestSchemaVersion()) {
    return Status::Refused(
        "journal " + Quote(path) + " has schema version " + std::to_string(info.user_version) +
        ", newer than this fencekeeper knows (" + std::to_string(LatestSchemaVersion()) +
        "); run a fencekeeper at least as new as the one that wrote it");
  }
  return Status::Ok();
}

}  // namespace

Result<FileInfo> InspectJournalFile(const std::string& path) {
  FileInfo info;
  std::error_code ec;
  auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return info;
  info.exists = true;
  if (!fs::is_regular_file(status)) {
    return Status::Refused("journal " + Quote(path) + " is not a regular file");
  }
  if (fs::file_size(path, ec) == 0 && !ec) {
    info.empty = true;
    return info;
  }
  auto header = ReadSqliteHeader(path);
  if (!header.ok()) return header.status();
  if (HeaderIsTheTruth(*header, path)) {
    ReadIdentityFromHeader(*header, info);
  } else if (Status s = ReadIdentityFromDatabase(path, info); !s.ok()) {
    return s;
  }
  if (info.empty) return info;
  if (Status s = CheckOwnership(path, info); !s.ok()) return s;
  return info;
}

namespace {

// Readies the file for an open as `options` asks. Read-only opens never
// create or migrate, so they need a journal already at the latest schema; a
// writable open creates a missing file (mode 0600) or needs write access.
Status PrepareFile(const std::string& path, const FileInfo& info, const OpenOptions& options) {
  if (options.read_only) {
    if (!info.exists) return Status::NotFound("journal " + Quote(path) + " does not exist");
    if (info.empty || info.user_version < LatestSchemaVersion()) {
      return Status::Refused("journal " + Quote(path) + " is at schema version " +
                             std::to_string(info.user_version) +
                             "; run `fencekeeper migrate --journal " + path + "` first");
    }
  } else if (!info.exists) {
    const fs::path parent = fs::absolute(path).parent_path();
    std::error_code ec;
    if (!fs::is_directory(parent, ec)) {
      return Status::IOError("cannot create journal " + Quote(path) + ": directory " +
                             Quote(parent.string()) + " does not exist");
    }
    return CreateFile(path);
  } else if (::access(path.c_str(), R_OK | W_OK) != 0) {
    return Status::IOError("journal " + Quote(path) + " is not writable: " + std::strerror(errno));
  }
  return Status::Ok();
}

// Sets the connection's pragmas; SQLite failures throw SQLite::Exception.
Status ConfigureConnection(SQLite::Database& db, const std::string& path,
                           const OpenOptions& options) {
  db.setBusyTimeout(options.busy_timeout_ms);
  if (!options.read_only) {
    if (sqlite3_db_readonly(db.getHandle(), "main") == 1) {
      return Status::IOError("journal " + Quote(path) + " could only be opened read-only");
    }
    // Before WAL mode writes the header: a new file is created with
    // auto_vacuum = INCREMENTAL, so that Checkpoint can give its free pages
    // back (an older journal is switched by UseIncrementalVacuum). Only a new
    // one: on an existing file the pragma writes the header.
    if (db.execAndGet("PRAGMA page_count").getInt64() == 0)
      db.exec("PRAGMA auto_vacuum = INCREMENTAL");
    const std::string mode = db.execAndGet("PRAGMA journal_mode = WAL").getString();
    if (mode != "wal") {
      return Status::IOError("journal " + Quote(path) + " could not be switched to WAL mode (got " +
                             mode + ")");
    }
    // FULL: a commit that recorded "intent issued" must survive power loss,
    // not only a process crash (docs/design.md#append-only-intent-before-effect).
    db.exec("PRAGMA synchronous = FULL");
    db.exec("PRAGMA journal_size_limit = " + std::to_string(options.wal_size_limit_bytes));
  }
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA cache_size = -" + std::to_string(options.cache_kib));
  if (options.max_page_count > 0) {
    db.exec("PRAGMA max_page_count = " + std::to_string(options.max_page_count));
  }
  return Status::Ok();
}

// A read-only open that cannot load the state of a journal with a -wal file
// has most likely hit ReadOnlyUri's limit (a WAL is readable only with its
// -shm file or a writable directory): say so, and what to do.
Status ExplainLoadFailure(const std::string& path, const OpenOptions& options, const Status& s) {
  std::error_code ec;
  if (options.read_only && fs::exists(path + "-wal", ec)) {
    return Status::IOError(s.message() +
                           " (the journal has a -wal file, which can be read only with its "
                           "-shm file or a writable directory: copy the journal and its -wal "
                           "somewhere writable)");
  }
  return s;
}

// The second half of migration 10 (UseIncrementalVacuum), with the room
// the volume has beyond the reserve; without it, the journal stays as it was.
void SwitchToIncrementalVacuum(SQLite::Database& db, const std::string& path,
                               const OpenOptions& options) {
  const Result<VolumeSpace> space = options.volume_space ? options.volume_space() : SpaceOf(path);
  const int64_t free_bytes = space.ok() ? space->free_bytes - options.reserve_bytes : 0;
  if (Status s = UseIncrementalVacuum(db, free_bytes); !s.ok()) {
    log::Warn("journal keeps its free pages: it could not be switched to incremental vacuum")
        .Str("journal", path)
        .Error(s);
  }
}

}  // namespace

Journal::Journal(std::string path, std::unique_ptr<Impl> impl)
    : path_(std::move(path)), impl_(std::move(impl)) {}

Journal::~Journal() = default;

Result<std::unique_ptr<Journal>> Journal::Open(const std::string& path,
                                               const OpenOptions& options) {
  const TimeSource* clock = options.clock ? options.clock : &RealTimeSource::Instance();
  auto info = InspectJournalFile(path);
  if (!info.ok()) return info.status();
  if (Status s = PrepareFile(path, *info, options); !s.ok()) return s;

  std::unique_ptr<Impl> impl;
  try {
    // Read-only: by ReadOnlyUri's rule, so nothing is written beside the file.
    impl = options.read_only
               ? std::make_unique<Impl>(ReadOnlyUri(path), SQLite::OPEN_READONLY | SQLite::OPEN_URI,
                                        options.vfs, clock)
               : std::make_unique<Impl>(path, SQLite::OPEN_READWRITE, options.vfs, clock);
    if (Status s = ConfigureConnection(impl->db, path, options); !s.ok()) return s;
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot open journal " + Quote(path), e);
  }

  if (!options.read_only) {
    if (Status s = ApplyMigrations(impl->db, EmbeddedMigrations(), *clock); !s.ok()) {
      return Status(Status::IOError("journal " + Quote(path) + ": " + s.message()));
    }
    SwitchToIncrementalVacuum(impl->db, path, options);
  }
  std::unique_ptr<Journal> journal(new Journal(path, std::move(impl)));
  journal->refuse_writes_ = options.refuse_writes;
  journal->max_batch_calls_ = std::max<size_t>(1, options.max_batch_calls);
  journal->volume_space_ =
      options.volume_space ? options.volume_space
                           : std::function<Result<VolumeSpace>()>([path] { return SpaceOf(path); });
  journal->busy_timeout_ms_ = options.busy_timeout_ms;
  try {
    journal->schema_version_ = journal->impl_->db.execAndGet("PRAGMA user_version").getInt();
  } catch (const SQLite::Exception& e) {
    return FromSqlite("journal " + Quote(path), e);
  }
  if (Status s = journal->LoadState(); !s.ok()) return ExplainLoadFailure(path, options, s);
  if (!options.read_only && options.reserve_bytes > 0) {
    journal->reserve_ = std::make_unique<SpaceReserve>(path + ".reserve", options.reserve_bytes);
    std::lock_guard db_lock(journal->db_mu_);
    journal->SizeReserve(journal->state_.sandboxes.size());
    // A volume already too full for it: shed until CheckSpace finds room.
    if (!journal->reserve_->Take().ok()) journal->SetShedding(true);
  }
  return journal;
}

namespace {

FenceRecord FenceRow(SQLite::Statement& row) {
  FenceRecord r;
  r.ns = row.getColumn(0).getString();
  r.policy = row.getColumn(1).getString();
  r.observation = {row.getColumn(2).getInt() != 0, row.getColumn(3).getString(),
                   row.getColumn(4).getInt64(), row.getColumn(5).getInt() != 0};
  r.seq = row.getColumn(6).getInt64();
  r.updated_at = row.getColumn(7).getString();
  if (r.observation.present) r.max_generation[r.observation.uid] = r.observation.generation;
  return r;
}

void LoadFences(SQLite::Database& db, JournalState& state) {
  SQLite::Statement fences(db,
                           "SELECT namespace, policy, present, policy_uid, generation, intact, "
                           "seq, updated_at FROM fence_projection");
  while (fences.executeStep()) {
    FenceRecord r = FenceRow(fences);
    state.fences[{r.ns, r.policy}] = r;
  }
}

constexpr const char* kSandboxProjection =
    "SELECT sandbox_uid, namespace, name, observation, observation_seq, "
    "decision, decision_seq, pending_intent_seq, applied_generation, "
    "updated_at, refused_intent_seq, dry_run_generation FROM sandbox_projection";
constexpr int kRefusedIntentColumn = 10;

// Decodes column `col` of sandbox `uid`'s row, a JSON text or NULL, into `out`.
template <class T, class Optional>
Status DecodeColumn(SQLite::Statement& row, int col, const std::string& uid,
                    Result<T> (*decode)(std::string_view), Optional& out) {
  if (row.getColumn(col).isNull()) return Status::Ok();
  auto decoded = decode(row.getColumn(col).getString());
  if (!decoded.ok())
    return Status::Corruption("sandbox_projection " + uid + ": " + decoded.status().message());
  out = std::move(*decoded);
  return Status::Ok();
}

// A sandbox_projection row, all but its refused intent (which lives in the
// events). A row whose JSON does not decode is corruption.
Result<SandboxRecord> SandboxRow(SQLite::Statement& row) {
  SandboxRecord r;
  const std::string uid = row.getColumn(0).getString();
  r.uid = CompactString(uid);
  r.ns = CompactString(row.getColumn(1).getString());
  r.name = CompactString(row.getColumn(2).getString());
  // Only the digest is kept: a live journal never reads the snapshot again.
  std::optional<Snapshot> observation;
  if (Status s = DecodeColumn(row, 3, uid, &DecodeSnapshot, observation); !s.ok()) return s;
  if (observation) r.observed = DigestOf(*observation);
  r.observation_seq = row.getColumn(4).getInt64();
  if (Status s = DecodeColumn(row, 5, uid, &DecodeDecision, r.decision); !s.ok()) return s;
  r.decision_seq = row.getColumn(6).getInt64();
  if (!row.getColumn(7).isNull()) r.history.pending_intent_seq = row.getColumn(7).getInt64();
  if (!row.getColumn(8).isNull()) r.history.applied_generation = row.getColumn(8).getInt64();
  r.updated_at = CompactString(row.getColumn(9).getString());
  if (!row.getColumn(11).isNull()) r.history.dry_run_generation = row.getColumn(11).getInt64();
  seed_held_sandbox(r);
  return r;
}

// The visitor of event `seq`, which sandbox `uid`'s projection names as its
// pending intent: it puts that intent into `state`, and calls any other kind
// of event there corruption.
std::function<Status(const Event&)> PendingIntentLoader(JournalState& state, const std::string& uid,
                                                        int64_t seq) {
  return [&state, &uid, seq](const Event& e) {
    if (const auto* intent = std::get_if<SuspendIntent>(&e.body)) {
      state.pending_intents[seq] = IntentRecord{seq, e.ns, e.name, e.uid, *intent};
      return Status::Ok();
    }
    return Status::Corruption("sandbox_projection " + uid + " names seq " + std::to_string(seq) +
                              " as its pending intent, but that event is a " + ToString(e.kind()));
  };
}

}  // namespace

namespace {

// The events of schema 1-4 (table events_v1) in [from_seq, until_seq].
Status ForEachLegacyEvent(SQLite::Database& db, int64_t from_seq, int64_t until_seq,
                          const std::function<Status(const Event&)>& fn) {
  SQLite::Statement q(db,
                      "SELECT seq, recorded_at, kind, namespace, name, uid, COALESCE(ref_seq, 0), "
                      "payload FROM events_v1 WHERE seq BETWEEN ? AND ? ORDER BY seq");
  q.bind(1, from_seq);
  q.bind(2, until_seq);
  while (q.executeStep()) {
    Event e;
    e.seq = q.getColumn(0).getInt64();
    e.recorded_at = q.getColumn(1).getString();
    const std::string kind = q.getColumn(2).getString();
    e.ns = q.getColumn(3).getString();
    e.name = q.getColumn(4).getString();
    e.uid = q.getColumn(5).getString();
    e.ref_seq = q.getColumn(6).getInt64();
    auto k = ParseEventKind(kind);
    if (!k)
      return Status::Corruption("event seq " + std::to_string(e.seq) + " has unknown kind '" +
                                kind + "'");
    auto body = DecodePayload(*k, q.getColumn(7).getString());
    if (!body.ok()) {
      return Status::Corruption("event seq " + std::to_string(e.seq) + ": " +
                                body.status().message());
    }
    e.body = std::move(*body);
    if (Status s = fn(e); !s.ok()) return s;
  }
  return Status::Ok();
}

// The compact rows' columns, as RowEvents reads them.
constexpr const char* kCompactRows =
    "SELECT j.seq, j.at, j.kind, s.namespace, s.name, s.uid, "
    "COALESCE(j.ref, 0), j.body, COALESCE(s.base, '') FROM journal AS j "
    "JOIN subjects AS s ON s.id = j.subject ";

// The events of the compact row `q` stands on (selected as kCompactRows).
Result<std::vector<Event>> RowEvents(SQLite::Statement& q) {
  compact::RowContext row{q.getColumn(0).getInt64(),
                          q.getColumn(1).getInt64(),
                          q.getColumn(3).getString(),
                          q.getColumn(4).getString(),
                          q.getColumn(5).getString(),
                          q.getColumn(6).getInt64(),
                          {}};
  const std::string base = q.getColumn(8).getString();
  row.base = base;
  auto events = compact::DecodeRow(q.getColumn(2).getInt(), q.getColumn(7).getString(), row);
  if (!events.ok()) {
    return Status::Corruption("event seq " + std::to_string(row.seq) + ": " +
                              events.status().message());
  }
  return events;
}

// The events of schema 5 (table journal) in [from_seq, until_seq]: a row
// holds up to three, from its own seq on.
Status ForEachCompactEvent(SQLite::Database& db, int64_t from_seq, int64_t until_seq,
                           const std::function<Status(const Event&)>& fn) {
  SQLite::Statement q(db,
                      std::string(kCompactRows) + "WHERE j.seq BETWEEN ? - 2 AND ? ORDER BY j.seq");
  q.bind(1, from_seq);
  q.bind(2, until_seq);
  while (q.executeStep()) {
    auto events = RowEvents(q);
    if (!events.ok()) return events.status();
    for (const Event& e : *events) {
      if (e.seq < from_seq || e.seq > until_seq) continue;
      if (Status s = fn(e); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

// The SandboxDigest of sandbox `uid` as its latest kept hold decision observed
// it, read backwards through its own rows; 0 when none is kept (never held,
// pruned, or only in the rows of schema 1-4, which this does not read).
Result<uint64_t> LastHeldSandbox(SQLite::Database& db, const std::string& uid) {
  SQLite::Statement q(db, std::string(kCompactRows) +
                              "WHERE j.subject = (SELECT subject FROM sandbox_projection "
                              "WHERE sandbox_uid = ?) ORDER BY j.seq DESC");
  q.bind(1, uid);
  bool held = false;  // the hold is found; its observation is at or before it
  while (q.executeStep()) {
    auto events = RowEvents(q);
    if (!events.ok()) return events.status();
    for (auto e = events->rbegin(); e != events->rend(); ++e) {
      const auto* d = std::get_if<Decided>(&e->body);
      held = held || (d && d->decision.verdict == Verdict::kHold);
      const auto* o = std::get_if<SandboxObserved>(&e->body);
      if (held && o) return SandboxDigest(o->snapshot.sandbox);
    }
  }
  return uint64_t{0};
}

}  // namespace

Status Journal::LoadState() {
  std::lock_guard db_lock(db_mu_);
  JournalState state;
  try {
    auto& db = impl_->db;
    // An intent the projections name is read from its row; in an archive
    // file it may be older than the file's first row, and in the base state.
    auto base = LoadBase(db);
    if (!base.ok()) return base.status();
    LoadFences(db, state);
    SQLite::Statement sandboxes(db, kSandboxProjection);
    while (sandboxes.executeStep()) {
      auto r = SandboxRow(sandboxes);
      if (!r.ok()) return r.status();
      if (const auto& column = sandboxes.getColumn(kRefusedIntentColumn); !column.isNull()) {
        auto refused = LoadRefused(column.getInt64(), *base);
        if (!refused.ok()) return refused.status();
        r->refused = *refused;
      }
      state.sandboxes.insert_or_assign(r->uid, *r);
      reindex_sandbox(state, r->uid.str(), std::nullopt);
    }
    for (const auto& [uid, r] : state.sandboxes) {
      if (!r.history.pending_intent_seq) continue;
      const int64_t seq = *r.history.pending_intent_seq;
      if (seq <= base->last_seq) {
        if (auto it = base->pending_intents.find(seq); it != base->pending_intents.end())
          state.pending_intents[seq] = it->second;
        continue;
      }
      const std::string text = uid.str();  // the loader holds it by reference
      if (Status s = ForEachEventLocked(seq, seq, PendingIntentLoader(state, text, seq)); !s.ok())
        return s;
    }
    state.last_seq = db.execAndGet(kMaxSeqSql).getInt64();
    impl_->subjects.Load(db);
    impl_->head = {};
    SQLite::Statement head(db, "SELECT seq, hash FROM journal_head");
    if (head.executeStep())
      impl_->head = {head.getColumn(0).getInt64(), head.getColumn(1).getString()};
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot load journal state from " + Quote(path_), e);
  }
  std::unique_lock state_lock(state_mu_);
  state_ = std::move(state);
  return Status::Ok();
}

// Intent `seq` and the latest outcome recorded for it, under db_mu_.
Result<std::optional<FoundIntent>> Journal::FindIntentLocked(int64_t seq) const {
  std::optional<FoundIntent> found;
  std::optional<SuspendOutcome> latest;
  auto take = [&](const Event& e) {
    if (const auto* i = std::get_if<SuspendIntent>(&e.body)) {
      found = FoundIntent{IntentRecord{e.seq, e.ns, e.name, e.uid, *i}, std::nullopt};
    } else if (const auto* o = std::get_if<SuspendOutcome>(&e.body)) {
      latest = *o;
    }
    return Status::Ok();
  };
  try {
    SQLite::Statement q(impl_->db,
                        "SELECT max((SELECT COALESCE(max(seq), 0) FROM events_v1 "
                        "WHERE ref_seq = ?1 AND kind = 'suspend_outcome'), "
                        "(SELECT COALESCE(max(seq), 0) FROM journal WHERE ref = ?1 AND kind = 5))");
    q.bind(1, seq);
    q.executeStep();
    const int64_t outcome_seq = q.getColumn(0).getInt64();
    if (Status s = ForEachEventLocked(seq, seq, take); !s.ok()) return s;
    if (found && outcome_seq > 0) {
      if (Status s = ForEachEventLocked(outcome_seq, outcome_seq, take); !s.ok()) return s;
      found->latest = latest;
    }
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot read journal " + Quote(path_), e);
  }
  return found;
}

// An intent whose row was removed: the intent as the base state holds it
// (refused, or pending at the cut), its latest outcome from the rows kept.
Result<RefusedIntent> Journal::RefusedFromBase(int64_t seq, const JournalState& base) const {
  std::optional<RefusedIntent> refused;
  for (const auto& [uid, r] : base.sandboxes)
    if (r.refused && r.refused->intent.seq == seq) refused = *r.refused;
  if (auto it = base.pending_intents.find(seq); it != base.pending_intents.end())
    refused = RefusedIntent{it->second, {}};
  if (!refused)
    return Status::Corruption(
        "sandbox_projection names seq " + std::to_string(seq) +
        " as a refused intent, but neither its row nor the base state holds it");
  Status s = ForEachEventLocked(base.last_seq + 1, std::numeric_limits<int64_t>::max(),
                                [&](const Event& e) {
                                  const auto* o = std::get_if<SuspendOutcome>(&e.body);
                                  if (o && e.ref_seq == seq) refused->outcome = *o;
                                  return Status::Ok();
                                });
  if (!s.ok()) return s;
  if (refused->outcome.outcome != Outcome::kFailed)
    return Status::Corruption("sandbox_projection names seq " + std::to_string(seq) +
                              " as a refused intent, but its latest outcome is not failed");
  return *refused;
}

Result<std::optional<FoundIntent>> Journal::FindIntent(int64_t seq) const {
  std::lock_guard db_lock(db_mu_);
  return FindIntentLocked(seq);
}

// The refused intent `seq` and the latest outcome recorded for it (from
// the base state when its rows were removed).
Result<RefusedIntent> Journal::LoadRefused(int64_t seq, const JournalState& base) const {
  if (seq <= base.last_seq) return RefusedFromBase(seq, base);
  auto found = FindIntentLocked(seq);
  if (!found.ok()) return found.status();
  if (!*found || !(*found)->latest || (*found)->latest->outcome != Outcome::kFailed) {
    return Status::Corruption("sandbox_projection names seq " + std::to_string(seq) +
                              " as a refused intent, but it is not an intent whose latest "
                              "outcome is failed");
  }
  return RefusedIntent{(*found)->intent, *(*found)->latest};
}

// `outcome` with its text as BoundEventText leaves it in the row.
static SuspendOutcome AsStored(const SuspendOutcome& outcome) {
  Event e;
  e.body = outcome;
  BoundEventText(e);
  return std::get<SuspendOutcome>(e.body);
}

Result<std::vector<Event>> Journal::Append(std::vector<Event> events) {
  if (events.empty()) return events;
  Member member([&](BatchState& batch) -> Result<std::vector<Event>> {
    const JournalState& state = batch.For(events);
    for (const Event& e : events) {
      if (e.kind() == EventKind::kSuspendOutcome && !outcome_has_intent(state, e)) {
        return Status::InvalidArgument("outcome for seq " + std::to_string(e.ref_seq) +
                                       ", which is neither a pending nor a refused intent");
      }
    }
    return std::move(events);
  });
  if (Status s = Submit(member); !s.ok()) return s;
  return std::move(member.events);
}

// Whether `events` record the intent of a PATCH: what a volume short of space
// still takes (a dry-run intent sends nothing, so it waits for space too).
static bool HasIntent(const Evaluation& evaluation, const std::vector<Event>& events) {
  return evaluation.decision.action == Action::kPatchSuspend &&
         std::any_of(events.begin(), events.end(),
                     [](const Event& e) { return e.kind() == EventKind::kSuspendIntent; });
}

Result<Recorded> Journal::Record(const Evaluation& evaluation) {
  Recorded r;
  bool hold_started = false;
  Member member([&](BatchState& batch) -> Result<std::vector<Event>> {
    const JournalState& state = batch.For(evaluation);
    r.retry = refused_to_retry(state, evaluation);
    uint64_t held_before = 0;
    if (needs_held_sandbox(state, evaluation)) {
      // Rare (a sandbox's first hold in this process after another verdict):
      // one indexed read of its own rows, under the commit's lock.
      try {
        auto held = LastHeldSandbox(impl_->db, evaluation.snapshot.sandbox.uid);
        if (!held.ok()) return held.status();
        held_before = *held;
      } catch (const SQLite::Exception& e) {
        return FromSqlite("cannot read journal " + Quote(path_), e);
      }
    }
    hold_started = starts_hold_episode(state, evaluation, held_before);
    std::vector<Event> events = plan_events(state, evaluation);
    if (shedding_ && !events.empty() && !HasIntent(evaluation, events)) {
      r.shed = true;  // an observation or a decision alone: recorded when space returns
      return std::vector<Event>{};
    }
    return events;
  });
  if (evaluation.decision.action == Action::kRecordDryRun) {
    member.follow_up = [&](BatchState& batch) -> Result<std::vector<Event>> {
      return plan_dry_run_outcome(batch.For(evaluation), evaluation);
    };
  }
  if (Status s = Submit(member); !s.ok()) return s;
  NoteRecorded(r, evaluation, member.events, hold_started);
  return r;
}

Result<int64_t> Journal::RecordOutcome(int64_t intent_seq, const SuspendOutcome& outcome,
                                       const IntentRecord* known, const Evaluation* observed) {
  // Planned as it will be stored, so that a refusal repeated word for word
  // compares equal to the one recorded (and appends nothing).
  const SuspendOutcome stored = AsStored(outcome);
  Member member([&](BatchState& batch) {
    const JournalState& state = known ? batch.ForSandbox(known->uid) : batch.ForIntent(intent_seq);
    return plan_outcome(state, intent_seq, stored, known);
  });
  if (observed && outcome.outcome == Outcome::kApplied && !shedding_) {
    member.follow_up = [&](BatchState& batch) -> Result<std::vector<Event>> {
      return plan_observed_after_outcome(batch.For(*observed), *observed);
    };
  }
  if (Status s = Submit(member); !s.ok()) return s;
  return member.events.empty() ? int64_t{0} : member.events.front().seq;
}

Result<size_t> Journal::Forget(const std::string& uid, const std::string& detail) {
  Member member([&](BatchState& batch) -> Result<std::vector<Event>> {
    return plan_forget(batch.ForSandbox(uid), uid, detail);
  });
  if (Status s = Submit(member); !s.ok()) return s;
  return member.events.size();
}

SpaceStatus Journal::CheckSpace() {
  std::lock_guard db_lock(db_mu_);
  SpaceStatus s;
  auto v = volume_space_ ? volume_space_() : Result<VolumeSpace>(Status::Internal("no volume"));
  s.known = v.ok();
  if (v.ok()) s.volume = *v;
  if (!reserve_) {
    s.shedding = shedding_.load();
    return s;
  }
  const int64_t reserve = reserve_->bytes();
  if (s.known) {
    if (s.volume.free_bytes < 2 * reserve) {
      SetShedding(true);  // short: shed before the volume is full
    } else if (shedding_ && s.volume.free_bytes >= (reserve_->held() ? 2 : 3) * reserve &&
               reserve_->Take().ok()) {
      SetShedding(false);  // room for the reserve and as much again
    }
  }
  s.reserve_held = reserve_->held();
  s.reserve_bytes = reserve;
  s.shedding = shedding_.load();
  return s;
}

void Journal::SizeReserve(size_t sandboxes) {
  if (!reserve_ || sandboxes <= reserve_covers_) return;
  // In steps, so that a growing fleet grows the file now and then, not at
  // every new sandbox.
  reserve_covers_ = sandboxes + sandboxes / 4 + 64;
  const auto volume = volume_space_();
  if (!volume.ok()) return;
  // A volume that cannot hold the reserve its sandboxes need is short.
  if (!reserve_->Grow(ReserveFor(*volume, reserve_covers_)).ok()) SetShedding(true);
}

void Journal::SetShedding(bool on) {
  if (shedding_.exchange(on) == on) return;
  // Short of space, the WAL is checkpointed every few pages, so that the
  // next commits reuse it from its start instead of growing it into what
  // the reserve left; with room again, SQLite's default.
  sqlite3_wal_autocheckpoint(impl_->db.getHandle(), on ? kShortWalPages : 1000);
}

bool Journal::MakeRoom() {
  if (reserve_ && reserve_->held()) {
    SetShedding(true);  // from now on, intents and outcomes only
    return reserve_->Release().ok();
  }
  if (reserve_) SetShedding(true);
  // The WAL checkpointed to its end is written again from its start: the
  // next try needs no new block for it.
  return CheckpointWal(SQLITE_CHECKPOINT_RESTART) == SQLITE_OK;
}

// One checkpoint in `mode` that never waits for a reader: a worker must not
// wait on an operator's long `replay`. A busy one still copies what it can,
// as PASSIVE would, and the next idle moment tries again.
int Journal::CheckpointWal(int mode) {
  sqlite3* db = impl_->db.getHandle();
  sqlite3_busy_timeout(db, 0);
  const int rc = sqlite3_wal_checkpoint_v2(db, nullptr, mode, nullptr, nullptr);
  sqlite3_busy_timeout(db, busy_timeout_ms_);
  return rc;
}

// The pages forgotten sandboxes and retention freed leave the file with the
// checkpoint that follows (auto_vacuum = INCREMENTAL): what the volume holds
// is the pages in use. Not while shedding: moving pages writes the WAL, and
// the free pages are room the next intents may need. A failure only leaves
// them for the next idle checkpoint.
void Journal::GiveBackFreePages() {
  try {
    if (impl_->db.execAndGet("PRAGMA freelist_count").getInt64() == 0) return;
    impl_->db.exec("PRAGMA incremental_vacuum");
  } catch (const SQLite::Exception& e) {
    log::Warn("journal: incremental vacuum failed").Str("journal", path_).Error(e.what());
  }
}

Status Journal::Checkpoint() {
  std::lock_guard db_lock(db_mu_);
  if (!wrote_since_checkpoint_) return Status::Ok();
  if (!shedding_) GiveBackFreePages();
  // Short of space the WAL keeps its blocks (RESTART, not TRUNCATE): what it
  // gave back another writer could take, and the next commits need it again.
  const int rc = CheckpointWal(shedding_ ? SQLITE_CHECKPOINT_RESTART : SQLITE_CHECKPOINT_TRUNCATE);
  if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
    return Status::Busy("checkpoint of " + Quote(path_) + " is waiting for a reader");
  if (rc != SQLITE_OK) {
    return Status::IOError("cannot checkpoint journal " + Quote(path_) + ": " +
                           sqlite3_errmsg(impl_->db.getHandle()));
  }
  wrote_since_checkpoint_ = false;
  return Status::Ok();
}

Status Journal::ForEachEvent(int64_t from_seq, int64_t until_seq,
                             const std::function<Status(const Event&)>& fn) const {
  std::lock_guard db_lock(db_mu_);
  return ForEachEventLocked(from_seq, until_seq, fn);
}

Status Journal::ForEachEventLocked(int64_t from_seq, int64_t until_seq,
                                   const std::function<Status(const Event&)>& fn) const {
  return ForEachEventIn(impl_->db, path_, from_seq, until_seq, fn);
}

Status ForEachEventIn(SQLite::Database& db, const std::string& path, int64_t from_seq,
                      int64_t until_seq, const std::function<Status(const Event&)>& fn) {
  try {
    if (Status s = ForEachLegacyEvent(db, from_seq, until_seq, fn); !s.ok()) return s;
    return ForEachCompactEvent(db, from_seq, until_seq, fn);
  } catch (const SQLite::Exception& ex) {
    return FromSqlite("cannot read journal " + Quote(path), ex);
  }
}

Result<std::string> Journal::IntegrityCheck() const {
  std::lock_guard db_lock(db_mu_);
  try {
    SQLite::Statement q(impl_->db, "PRAGMA integrity_check");
    std::string out;
    while (q.executeStep()) {
      if (!out.empty()) out += "\n";
      out += q.getColumn(0).getString();
    }
    return out;
  } catch (const SQLite::Exception& e) {
    return FromSqlite("integrity_check on " + Quote(path_), e);
  }
}

}  // namespace fk::journal
