// `fencekeeper journal verify`: SQLite's integrity, the hash chain row by row,
// the projections against what the events fold to, and an auditor's head.
// Reads only: read-only media, or beside a running `run`.
#include <ostream>

#include "cli/commands.h"
#include "domain/journal_state.h"
#include "journal/journal.h"
#include "journal/verify.h"

namespace fk::cli {
namespace {

struct ExpectedHead {
  int64_t seq = 0;
  std::string hash;
};

std::optional<ExpectedHead> ParseHead(const std::string& text) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || colon == 0) return std::nullopt;
  const std::string seq = text.substr(0, colon), hash = text.substr(colon + 1);
  if (seq.find_first_not_of("0123456789") != std::string::npos || seq.size() > 18)
    return std::nullopt;
  if (hash.size() != 64 || hash.find_first_not_of("0123456789abcdef") != std::string::npos)
    return std::nullopt;
  return ExpectedHead{std::stoll(seq), hash};
}

// The state the retained events fold to equals the projection tables.
Status FoldsToProjections(const journal::Journal& j) {
  domain::JournalState folded;
  Status s = j.ForEachEvent(1, j.state().last_seq, [&](const domain::Event& e) {
    domain::fold(folded, e);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  if (!(folded == j.state()))
    return Status::Corruption("the projection tables differ from the state the events fold to");
  return Status::Ok();
}

}  // namespace

int RunJournalVerify(const VerifyOptions& o, std::ostream& out, std::ostream& err) {
  const auto unusable = [&](const std::string& why) {
    err << "fencekeeper journal verify: " << why << "\n";
    return kExitUnusable;
  };
  const auto mismatch = [&](int64_t seq, const std::string& why) {
    err << "fencekeeper journal verify: " << o.journal << ": mismatch at seq " << seq << ": " << why
        << "\n";
    return kExitCheckFailed;
  };
  std::optional<ExpectedHead> expected;
  if (o.expect_head && !(expected = ParseHead(*o.expect_head)))
    return unusable("--expect-head: want SEQ:HASH (a seq and 64 lowercase hex digits), got '" +
                    *o.expect_head + "'");
  journal::OpenOptions open;
  open.read_only = true;
  auto j = journal::Journal::Open(o.journal, open);
  if (!j.ok()) return unusable(j.status().ToString());
  auto integrity = (*j)->IntegrityCheck();
  if (!integrity.ok()) return unusable(integrity.status().ToString());
  if (*integrity != "ok") return mismatch(0, "integrity_check: " + *integrity);
  auto chain = journal::CheckChain(o.journal, expected ? expected->seq : 0);
  if (!chain.ok()) return unusable(chain.status().ToString());
  if (chain->first_bad != 0) return mismatch(chain->first_bad, chain->why);
  if (Status s = FoldsToProjections(**j); !s.ok())
    return mismatch((*j)->state().last_seq, s.message());
  if (expected) {
    if (expected->seq > chain->head.seq)
      return mismatch(expected->seq, "the journal ends at seq " + std::to_string(chain->head.seq) +
                                         " before the expected head: its tail is gone");
    if (!chain->hash_at)
      return mismatch(expected->seq, "the journal holds no chained row at the expected head");
    if (*chain->hash_at != expected->hash)
      return mismatch(expected->seq, "the journal holds " + *chain->hash_at +
                                         " at the expected head, not " + expected->hash);
  }
  out << "journal " << o.journal << ": " << chain->rows << " chained rows";
  if (chain->unchained) out << " (" << chain->unchained << " before the chain started)";
  out << ", integrity ok, projections match the events\n";
  out << "head " << chain->head.ToString() << "\n";
  return kExitOk;
}

}  // namespace fk::cli
