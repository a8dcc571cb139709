#include "journal/verify.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include "journal/read_only.h"
#include "journal/sqlite_status.h"

namespace fk::journal {

namespace {

// The hash as 64 hex digits: the 32 bytes of schema 10 or an older archive
// file's text.
const std::string kRows =
    "SELECT j.seq, j.at, j.kind, j.ref, s.namespace, s.name, s.uid, COALESCE(s.base, ''), "
    "j.body, " +
    chain::HexSql("j.hash") +
    ", s.id IS NULL FROM journal AS j LEFT JOIN subjects AS s ON s.id = j.subject "
    "ORDER BY j.seq";

// One row against the one before it; "" when it matches.
std::string Mismatch(SQLite::Statement& q, const std::string& prev) {
  if (q.getColumn(10).getInt() != 0) return "its subject is missing";
  if (q.getColumn(9).isNull()) return "it carries no hash after the chain started";
  chain::RowText row;
  row.seq = q.getColumn(0).getInt64();
  row.at_ms = q.getColumn(1).getInt64();
  row.kind = q.getColumn(2).getInt();
  if (!q.getColumn(3).isNull()) row.ref = q.getColumn(3).getInt64();
  const std::string ns = q.getColumn(4).getString(), name = q.getColumn(5).getString(),
                    uid = q.getColumn(6).getString(), base = q.getColumn(7).getString(),
                    body = q.getColumn(8).getString();
  row.ns = ns;
  row.name = name;
  row.uid = uid;
  row.base = base;
  row.body = body;
  const std::string expected = chain::RowHash(prev, row);
  if (expected != q.getColumn(9).getString())
    return "its hash is " + q.getColumn(9).getString() + ", the chain gives " + expected;
  return "";
}

// What schema/audit/verify_chain.sql checks of the starts, in the same words:
// (seq, why) of every disagreement.
constexpr const char* kStartMismatches = R"sql(
WITH recorded AS (
  -- A file before schema 11 has neither the enforcement nor `chained`: the
  -- natural join's constants stand in for the columns it lacks.
  SELECT start, first_seq, writer, started_at, enforcement, dry_run_namespaces, chained
  FROM main.writer_starts NATURAL LEFT JOIN
       (SELECT 'enforce' AS enforcement, '[]' AS dry_run_namespaces, 0 AS chained)),
starts AS (
  SELECT w.start, w.first_seq, w.writer, w.started_at, w.enforcement, w.dry_run_namespaces,
         w.chained, j.kind, j.body, j.at,
         -- In the order rows are attributed in (first_seq, then start).
         COALESCE(max(w.chained) OVER (ORDER BY w.first_seq, w.start ROWS BETWEEN UNBOUNDED
                                       PRECEDING AND 1 PRECEDING), 0) AS follows_chained,
         count(*) FILTER (WHERE w.chained = 1) OVER (PARTITION BY w.first_seq) AS claims
  FROM recorded AS w LEFT JOIN journal AS j ON j.seq = w.first_seq),
judged AS (
  SELECT first_seq, start, writer, CASE
    WHEN chained = 0 THEN CASE WHEN follows_chained THEN 'not chained, but recorded after a chained start' END
    WHEN claims > 1 THEN 'another chained start claims the same row'
    WHEN first_seq <= (SELECT last_pruned FROM journal_cut) THEN NULL
    WHEN kind IS NULL THEN 'its chained row is missing'
    WHEN kind <> 11 THEN 'the row at its seq is not a writer start'
    WHEN json_extract(body, '$[0]') IS NOT writer
      THEN 'its row names writer ' || json_extract(body, '$[0]')
    WHEN json_extract(body, '$[1]') IS NOT enforcement
         OR json(json_extract(body, '$[2]')) IS NOT json(dry_run_namespaces)
      THEN 'it says ' || enforcement || ' ' || dry_run_namespaces || ', its row ' ||
           json_extract(body, '$[1]') || ' ' || json_extract(body, '$[2]')
    WHEN strftime('%Y-%m-%dT%H:%M:%S', at / 1000, 'unixepoch') || printf('.%03dZ', at % 1000)
         IS NOT started_at
      THEN 'it says it started at ' || started_at || ', its row was recorded at ' ||
           strftime('%Y-%m-%dT%H:%M:%S', at / 1000, 'unixepoch') || printf('.%03dZ', at % 1000)
  END AS why
  FROM starts)
SELECT first_seq, 'writer start ' || start || ' (' || writer || '): ' || why FROM judged
WHERE why IS NOT NULL
UNION ALL
SELECT j.seq, 'a writer_started row that no chained writer start claims' FROM journal AS j
WHERE j.kind = 11 AND NOT EXISTS (SELECT 1 FROM recorded AS w
                                  WHERE w.first_seq = j.seq AND w.chained = 1)
ORDER BY 1
)sql";

bool HasColumn(SQLite::Database& db, const char* table, const char* column) {
  SQLite::Statement q(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
  q.bind(1, table);
  q.bind(2, column);
  return q.executeStep();
}

}  // namespace

const char* StartMismatchesSql() { return kStartMismatches; }

Result<StartsCheck> CheckWriterStarts(const std::string& path) {
  StartsCheck out;
  try {
    SQLite::Database db(ReadOnlyUri(path), SQLite::OPEN_READONLY | SQLite::OPEN_URI);
    // A file with writer_started rows has chained starts: the table and its
    // column must be there (dropped or rebuilt, the rows would go unchecked).
    const int64_t started_rows =
        db.execAndGet("SELECT count(*) FROM journal WHERE kind = 11").getInt64();
    const bool chained_table =
        db.tableExists("writer_starts") && HasColumn(db, "writer_starts", "chained");
    if (started_rows > 0 && !chained_table) {
      out.first_bad = db.execAndGet("SELECT min(seq) FROM journal WHERE kind = 11").getInt64();
      out.why =
          "writer_started rows, but no table writer_starts with column chained to check "
          "them against (dropped or rebuilt)";
      return out;
    }
    if (!db.tableExists("writer_starts")) return out;  // before schema 8
    if (!chained_table) {                              // before schema 11: nothing chained
      out.starts = out.unchained = db.execAndGet("SELECT count(*) FROM writer_starts").getInt64();
      return out;
    }
    SQLite::Statement counts(
        db,
        "SELECT count(*), COALESCE(sum(chained = 0), 0), "
        "COALESCE(sum(chained = 1 AND first_seq <= (SELECT last_pruned FROM journal_cut)), 0) "
        "FROM writer_starts");
    counts.executeStep();
    out.starts = counts.getColumn(0).getInt64();
    out.unchained = counts.getColumn(1).getInt64();
    out.before_cut = counts.getColumn(2).getInt64();
    out.checked = out.starts - out.unchained - out.before_cut;
    SQLite::Statement bad(db, kStartMismatches);
    if (bad.executeStep()) {
      out.first_bad = bad.getColumn(0).getInt64();
      out.why = bad.getColumn(1).getString();
    }
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot read the writer starts of " + Quote(path), e);
  }
  return out;
}

Result<ChainCheck> CheckChain(const std::string& path, int64_t seq_of_interest) {
  ChainCheck out;
  try {
    SQLite::Database db(ReadOnlyUri(path), SQLite::OPEN_READONLY | SQLite::OPEN_URI);
    SQLite::Statement q(db, kRows);
    // After a prune the first row is chained to the last one removed.
    std::string prev(chain::kGenesis);
    if (std::string anchor = db.execAndGet("SELECT anchor_hash FROM journal_cut").getString();
        !anchor.empty())
      prev = anchor;
    out.anchor = prev;
    bool started = false;
    while (q.executeStep()) {
      const int64_t seq = q.getColumn(0).getInt64();
      if (!started && q.getColumn(9).isNull()) {
        ++out.unchained;
        continue;
      }
      started = true;
      ++out.rows;
      if (out.first_bad == 0) {
        if (std::string why = Mismatch(q, prev); !why.empty()) {
          out.first_bad = seq;
          out.why = why;
        }
      }
      // Each row is checked against the hash stored before it, as
      // verify_chain.sql does: one edited row is reported once.
      prev = q.getColumn(9).isNull() ? std::string() : q.getColumn(9).getString();
      if (seq == seq_of_interest) out.hash_at = prev;
      out.head = {seq, prev};
    }
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot read the chain of " + Quote(path), e);
  }
  return out;
}

Result<std::optional<ArchiveRange>> ReadArchiveRange(const std::string& path) {
  try {
    SQLite::Database db(ReadOnlyUri(path), SQLite::OPEN_READONLY | SQLite::OPEN_URI);
    SQLite::Statement q(db,
                        "SELECT first_seq, last_seq, rows, anchor_seq, anchor_hash, head_seq, "
                        "head_hash FROM archive_range");
    if (!q.executeStep()) return std::optional<ArchiveRange>();
    return std::optional<ArchiveRange>(ArchiveRange{
        q.getColumn(0).getInt64(), q.getColumn(1).getInt64(), q.getColumn(2).getInt64(),
        q.getColumn(3).getInt64(), q.getColumn(4).getString(), q.getColumn(5).getInt64(),
        q.getColumn(6).getString()});
  } catch (const SQLite::Exception& e) {
    return FromSqlite("cannot read the archive range of " + Quote(path), e);
  }
}

}  // namespace fk::journal
