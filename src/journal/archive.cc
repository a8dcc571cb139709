#include "journal/archive.h"

#include <fcntl.h>
#include <unistd.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "journal/base_state.h"
#include "journal/chain.h"
#include "journal/group_commit.h"
#include "journal/migrations.h"
#include "journal/sqlite_status.h"

namespace fk::journal {
namespace fs = std::filesystem;

std::string ArchiveFileName(int64_t first_seq, int64_t last_seq) {
  char name[64];
  std::snprintf(name, sizeof name, "journal-%012lld-%012lld.sqlite",
                static_cast<long long>(first_seq), static_cast<long long>(last_seq));
  return name;
}

std::string ArchiveName(const std::string& path) {
  return path.empty() ? std::string() : fs::path(path).filename().string();
}

namespace {

Status Fsync(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) return Status::IOError("cannot open " + Quote(path) + ": " + std::strerror(errno));
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0) return Status::IOError("cannot sync " + Quote(path) + ": " + std::strerror(err));
  return Status::Ok();
}

void InsertSubjects(SQLite::Database& db, const std::vector<SubjectRow>& subjects) {
  SQLite::Statement q(db,
                      "INSERT INTO subjects (id, namespace, name, uid, base) VALUES (?,?,?,?,?)");
  for (const SubjectRow& s : subjects) {
    q.reset();
    q.clearBindings();
    q.bind(1, s.id);
    q.bind(2, s.ns);
    q.bind(3, s.name);
    q.bind(4, s.uid);
    if (s.base) q.bind(5, *s.base);
    q.exec();
  }
}

void InsertRows(SQLite::Database& db, const ArchiveContent& c) {
  SQLite::Statement legacy(db,
                           "INSERT INTO events_v1 (seq, recorded_at, kind, namespace, name, uid, "
                           "ref_seq, payload) VALUES (?,?,?,?,?,?,?,?)");
  for (const LegacyRow& r : c.legacy) {
    legacy.reset();
    legacy.clearBindings();
    legacy.bind(1, r.seq);
    legacy.bind(2, r.recorded_at);
    legacy.bind(3, r.kind);
    legacy.bind(4, r.ns);
    legacy.bind(5, r.name);
    legacy.bind(6, r.uid);
    if (r.ref_seq) legacy.bind(7, *r.ref_seq);
    legacy.bind(8, r.payload);
    legacy.exec();
  }
  SQLite::Statement row(db,
                        "INSERT INTO journal (seq, at, kind, subject, ref, body, hash) "
                        "VALUES (?,?,?,?,?,?,?)");
  for (const CompactRow& r : c.rows) {
    row.reset();
    row.clearBindings();
    row.bind(1, r.seq);
    row.bind(2, r.at);
    row.bind(3, r.kind);
    row.bind(4, r.subject);
    if (r.ref) row.bind(5, *r.ref);
    row.bind(6, r.body);
    const std::string hash = chain::HexToBytes(r.hash);
    if (!r.hash.empty()) row.bind(7, hash.data(), static_cast<int>(hash.size()));
    row.exec();
  }
}

void InsertWriterStarts(SQLite::Database& db, const std::vector<WriterStartRow>& starts) {
  SQLite::Statement q(db,
                      "INSERT INTO writer_starts (start, first_seq, writer, started_at, "
                      "enforcement, dry_run_namespaces, chained) VALUES (?,?,?,?,?,?,?)");
  for (const WriterStartRow& w : starts) {
    q.reset();
    q.bind(1, w.start);
    q.bind(2, w.first_seq);
    q.bind(3, w.writer);
    q.bind(4, w.started_at);
    q.bind(5, w.enforcement);
    q.bind(6, w.dry_run_namespaces);
    q.bind(7, w.chained ? 1 : 0);
    q.exec();
  }
}

void InsertRange(SQLite::Database& db, const ArchiveRange& r, const std::string& source,
                 const TimeSource& clock) {
  SQLite::Statement q(db,
                      "INSERT INTO archive_range (first_seq, last_seq, rows, anchor_seq, "
                      "anchor_hash, head_seq, head_hash, source, written_at) "
                      "VALUES (?,?,?,?,?,?,?,?,?)");
  q.bind(1, r.first_seq);
  q.bind(2, r.last_seq);
  q.bind(3, r.rows);
  q.bind(4, r.anchor_seq);
  q.bind(5, r.anchor_hash);
  q.bind(6, r.head_seq);
  q.bind(7, r.head_hash);
  q.bind(8, source);
  q.bind(9, FormatRfc3339(clock.Now()));
  q.exec();
}

// The whole archive in one transaction, in rollback-journal mode: the file is
// complete by itself (no -wal beside it) once the connection closes.
Status Fill(const std::string& tmp, const std::string& source, const ArchiveContent& c,
            const domain::JournalState& before, const domain::JournalState& after,
            const TimeSource& clock) {
  try {
    SQLite::Database db(tmp, SQLite::OPEN_READWRITE);
    db.exec("PRAGMA synchronous = FULL");
    if (Status s = ApplyMigrations(db, EmbeddedMigrations(), clock); !s.ok()) return s;
    SQLite::Transaction tx(db);
    InsertSubjects(db, c.subjects);
    InsertRows(db, c);
    InsertWriterStarts(db, c.writer_starts);
    WriteBase(db, {}, before);
    WriteAllProjections(db, after);
    InsertRange(db, c.range, source, clock);
    tx.commit();
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot write archive " + Quote(tmp), e);
  }
  return Status::Ok();
}

}  // namespace

Result<std::string> WriteArchive(const std::string& dir, const std::string& source,
                                 const ArchiveContent& content,
                                 const domain::JournalState& base_before,
                                 const domain::JournalState& base_after, const TimeSource& clock) {
  const std::string path =
      (fs::path(dir) / ArchiveFileName(content.range.first_seq, content.range.last_seq)).string();
  const std::string tmp = path + ".tmp";
  ::unlink(tmp.c_str());
  const int fd = ::open(tmp.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0)
    return Status::IOError("cannot create archive " + Quote(tmp) + ": " + std::strerror(errno));
  ::close(fd);
  Status s = Fill(tmp, source, content, base_before, base_after, clock);
  if (s.ok()) s = Fsync(tmp, O_RDONLY);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0)
    s = Status::IOError("cannot rename archive " + Quote(tmp) + ": " + std::strerror(errno));
  if (s.ok()) s = Fsync(dir, O_RDONLY | O_DIRECTORY);
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  return path;
}

Result<std::vector<std::string>> ListArchives(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("journal-") && name.ends_with(".sqlite")) out.push_back(entry.path());
  }
  if (ec)
    return Status::IOError("cannot list archive directory " + Quote(dir) + ": " + ec.message());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace fk::journal
