// Archive files (`run --journal-archive DIR`, docs/retention.md): before
// retention removes a range of rows, they are written to a sealed,
// self-contained SQLite file of the journal's own schema — the rows with
// their hashes, their subjects, the base state before the range
// (journal_base), the state after it (the projection tables) and
// `archive_range` — and the file and its directory are synced. `sqlite3
// -readonly`, `replay` and `journal verify` read it as they read a journal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "domain/journal_state.h"

namespace fk::journal {

struct ArchiveRange {
  int64_t first_seq = 0, last_seq = 0;  // the events it holds
  int64_t rows = 0;
  int64_t anchor_seq = 0;   // the last seq removed before it (0: none)
  std::string anchor_hash;  // the hash its first chained row is chained to ("": genesis)
  int64_t head_seq = 0;     // its last chained row (0: none)
  std::string head_hash;
};

struct LegacyRow {  // a row of events_v1 (schema 1-4)
  int64_t seq = 0;
  std::string recorded_at, kind, ns, name, uid;
  std::optional<int64_t> ref_seq;
  std::string payload;
};

struct CompactRow {  // a row of journal (schema 5 on)
  int64_t seq = 0, at = 0;
  int kind = 0;
  int64_t subject = 0;
  std::optional<int64_t> ref;
  std::string body, hash;  // hash "" = NULL
};

struct SubjectRow {
  int64_t id = 0;
  std::string ns, name, uid;
  std::optional<std::string> base;
};

// A recorded start of `run` (writer_starts, schema 8; its enforcement and
// whether a chained row records it, schema 11).
struct WriterStartRow {
  int64_t start = 0, first_seq = 0;
  std::string writer, started_at;
  std::string enforcement = "enforce", dry_run_namespaces = "[]";
  bool chained = false;
};

struct ArchiveContent {
  ArchiveRange range;
  std::vector<LegacyRow> legacy;
  std::vector<CompactRow> rows;
  std::vector<SubjectRow> subjects;
  // The starts at or before the range's last seq: the archive names the
  // writer of each of its rows as the journal did (the journal keeps them).
  std::vector<WriterStartRow> writer_starts;
};

// The file name of a range: journal-<first>-<last>.sqlite, seqs zero-padded
// to 12 digits so that names sort as ranges do.
std::string ArchiveFileName(int64_t first_seq, int64_t last_seq);
// The last component of `path` ("" for "").
std::string ArchiveName(const std::string& path);

// Writes `content` to DIR/ArchiveFileName(...) — through a temporary file,
// synced, renamed, directory synced — and returns its path. An existing file
// of the same name (a step that crashed before its commit) is replaced.
Result<std::string> WriteArchive(const std::string& dir, const std::string& source,
                                 const ArchiveContent& content,
                                 const domain::JournalState& base_before,
                                 const domain::JournalState& base_after, const TimeSource& clock);

// The archive files in `dir`, sorted by name (= by range).
Result<std::vector<std::string>> ListArchives(const std::string& dir);

}  // namespace fk::journal
