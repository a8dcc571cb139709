// What `fencekeeper journal verify` checks inside one journal file, reading
// only (docs/journal-chain.md): the hash chain row by row, and that the
// projection tables equal what the retained events fold to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"
#include "journal/archive.h"
#include "journal/chain.h"

namespace fk::journal {

struct ChainCheck {
  chain::Head head;       // the last chained row (seq 0: none)
  std::string anchor;     // what its first chained row is chained to (kGenesis: nothing before)
  int64_t rows = 0;       // chained rows checked
  int64_t unchained = 0;  // rows before the chain starts (appended before schema 6)
  int64_t first_bad = 0;  // the first row whose hash does not match (0: none)
  std::string why;        // what is wrong with it
  // The hash stored at the seq asked for (if the file has a chained row there).
  std::optional<std::string> hash_at;
};

// Recomputes the chain of the journal at `path` (opened read-only, writing
// nothing beside it), noting the hash stored at `seq_of_interest` (0: none).
// kIOError/kCorruption when it cannot be read.
Result<ChainCheck> CheckChain(const std::string& path, int64_t seq_of_interest = 0);

// The run starts of one file (table writer_starts) against the chained
// `writer_started` rows (schema 11, docs/journal-chain.md#run-starts): a
// chained start must find its row at first_seq, saying the same writer,
// time and enforcement; every such row must be claimed by a chained start;
// no unchained start (recorded before schema 11) may follow a chained one.
// A start whose row retention removed is checked in the archive file that
// holds it.
struct StartsCheck {
  int64_t starts = 0;      // rows of writer_starts
  int64_t checked = 0;     // chained, and found equal to their row
  int64_t unchained = 0;   // recorded before schema 11: the chain cannot vouch for them
  int64_t before_cut = 0;  // chained, but their row is before this file's first row
  int64_t first_bad = 0;   // the seq of the first disagreement (0: none)
  std::string why;
};
Result<StartsCheck> CheckWriterStarts(const std::string& path);
// The query behind it, (seq, why) of each disagreement: verify_chain.sql
// holds the same text (a test keeps them equal), so the stock shell agrees.
const char* StartMismatchesSql();

// The range an archive file says it holds (nullopt: the file is a journal).
Result<std::optional<ArchiveRange>> ReadArchiveRange(const std::string& path);

}  // namespace fk::journal
