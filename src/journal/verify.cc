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

}  // namespace

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
