// The journal's hash chain (tamper evidence, docs/journal-chain.md).
//
// Every row of table `journal` carries `hash`: SHA3-256 (its 32 bytes since
// schema 10), of the previous row's hash, as 64 lowercase hex digits,
// followed by the row's canonical form —
// its own columns and its subject's, each spelled so that no two different
// rows give the same text:
//
//   PREV '|' seq '|' at '|' kind '|' ref '|' L(namespace) L(name) L(uid) L(base) L(body)
//
// where integers are decimal, `ref` is empty when NULL, and L(x) is x's
// length in bytes, ':' and x (a NULL base is empty). The stock sqlite3
// shell recomputes it with its built-in sha3() (schema/audit/verify_chain.sql);
// OpenSSL's EVP_sha3_256 computes the same digest here. PREV of the first
// chained row is kGenesis (64 zeros): the chain starts when the journal is
// created, or at the upgrade to schema 6 for an older journal (its earlier rows
// carry no hash).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fk::journal::chain {

inline constexpr std::string_view kGenesis =
    "0000000000000000000000000000000000000000000000000000000000000000";

// The columns a row's hash covers.
struct RowText {
  int64_t seq = 0;
  int64_t at_ms = 0;
  int kind = 0;
  std::optional<int64_t> ref;
  std::string_view ns, name, uid;
  std::string_view base;  // "" when NULL
  std::string_view body;
};

std::string Canonical(std::string_view prev, const RowText& row);
// Lowercase hex SHA3-256 of `text`.
std::string Sha3Hex(std::string_view text);
// The 32 bytes a hash in lowercase hex stands for: what column `hash` stores
// since schema 10 (a BLOB; 64 hex digits in a TEXT column before).
std::string HexToBytes(std::string_view hex);
// SQL that reads `column` as 64 lowercase hex digits whether it holds the 32
// bytes of schema 10 or the hex text of schemas 6-9 (an archive file written
// before the upgrade is never migrated); NULL stays NULL.
std::string HexSql(std::string_view column);
// The hash of `row` chained after `prev`.
inline std::string RowHash(std::string_view prev, const RowText& row) {
  return Sha3Hex(Canonical(prev, row));
}

// The last chained row: what `journal verify` prints and auditors keep.
struct Head {
  int64_t seq = 0;  // 0: nothing chained yet
  std::string hash{kGenesis};
  std::string ToString() const { return std::to_string(seq) + ":" + hash; }
};

}  // namespace fk::journal::chain
