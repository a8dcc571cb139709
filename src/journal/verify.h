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

// The range an archive file says it holds (nullopt: the file is a journal).
Result<std::optional<ArchiveRange>> ReadArchiveRange(const std::string& path);

}  // namespace fk::journal
