// `fencekeeper journal verify`: SQLite's integrity, the hash chain row by row,
// the projections against what the events fold to, an archive directory's
// files and how they join the journal, and an auditor's head. Reads only:
// read-only media, or beside a running `run`.
#include <ostream>
#include <sstream>

#include "cli/commands.h"
#include "domain/fold.h"
#include "domain/journal_state.h"
#include "journal/archive.h"
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

// Why verification stops: unusable input (exit 2) or a mismatch (exit 1).
struct Failure {
  int exit_code = kExitCheckFailed;
  std::string file;
  int64_t seq = 0;
  std::string why;
};
Failure Unusable(const std::string& why) { return {kExitUnusable, "", 0, why}; }
Failure Mismatch(const std::string& file, int64_t seq, const std::string& why) {
  return {kExitCheckFailed, file, seq, why};
}

// The state the retained events fold to, from the base state, equals the
// projection tables.
Status FoldsToProjections(const journal::Journal& j) {
  auto base = j.BaseState();  // what the events retention removed fold to
  if (!base.ok()) return base.status();
  domain::JournalState folded = std::move(*base);
  Status s = j.ForEachEvent(folded.last_seq + 1, j.state().last_seq, [&](const domain::Event& e) {
    domain::fold(folded, e);
    return Status::Ok();
  });
  if (!s.ok()) return s;
  if (!(folded == j.state()))
    return Status::Corruption("the projection tables differ from the state the events fold to");
  return Status::Ok();
}

// What one file (a journal or an archive file) was found to hold.
struct FileCheck {
  std::string path;
  journal::ChainCheck chain;
  journal::StartsCheck starts;
  std::optional<journal::ArchiveRange> range;  // set for an archive file
  std::vector<domain::Pruned> pruned;          // its `pruned` records
  int64_t last_seq = 0;
};

std::optional<Failure> CheckFile(const std::string& path, int64_t seq_of_interest, FileCheck& c) {
  c.path = path;
  journal::OpenOptions open;
  open.read_only = true;
  auto j = journal::Journal::Open(path, open);
  if (!j.ok()) return Unusable(j.status().ToString());
  auto integrity = (*j)->IntegrityCheck();
  if (!integrity.ok()) return Unusable(integrity.status().ToString());
  if (*integrity != "ok") return Mismatch(path, 0, "integrity_check: " + *integrity);
  auto chain = journal::CheckChain(path, seq_of_interest);
  if (!chain.ok()) return Unusable(chain.status().ToString());
  c.chain = *chain;
  if (chain->first_bad != 0) return Mismatch(path, chain->first_bad, chain->why);
  auto starts = journal::CheckWriterStarts(path);
  if (!starts.ok()) return Unusable(starts.status().ToString());
  c.starts = *starts;
  if (starts->first_bad != 0) return Mismatch(path, starts->first_bad, starts->why);
  if (Status s = FoldsToProjections(**j); !s.ok())
    return Mismatch(path, (*j)->state().last_seq, s.message());
  c.last_seq = (*j)->state().last_seq;
  auto range = journal::ReadArchiveRange(path);
  if (!range.ok()) return Unusable(range.status().ToString());
  c.range = *range;
  Status s = (*j)->ForEachEvent(1, c.last_seq, [&](const domain::Event& e) {
    if (const auto* p = std::get_if<domain::Pruned>(&e.body)) c.pruned.push_back(*p);
    return Status::Ok();
  });
  if (!s.ok()) return Mismatch(path, 0, s.message());
  return std::nullopt;
}

// An archive file holds what its archive_range says, chained as it says.
std::optional<Failure> CheckOwnRange(const FileCheck& a) {
  if (!a.range) return Mismatch(a.path, 0, "not an archive file (it has no archive_range)");
  const journal::ArchiveRange& r = *a.range;
  if (a.last_seq != r.last_seq)
    return Mismatch(a.path, a.last_seq,
                    "it ends at seq " + std::to_string(a.last_seq) + ", its archive_range says " +
                        std::to_string(r.last_seq));
  if (r.head_seq != 0 && (a.chain.head.seq != r.head_seq || a.chain.head.hash != r.head_hash))
    return Mismatch(a.path, a.chain.head.seq,
                    "its last chained row is " + a.chain.head.ToString() +
                        ", its archive_range says " + std::to_string(r.head_seq) + ":" +
                        r.head_hash);
  return std::nullopt;
}

// Consecutive files join: no gap, no overlap, and the chain goes on.
std::optional<Failure> CheckJoin(const FileCheck& before, int64_t next_anchor_seq,
                                 const std::string& next_anchor_hash, const std::string& next) {
  const journal::ArchiveRange& r = *before.range;
  if (next_anchor_seq != r.last_seq) {
    const bool gap = next_anchor_seq > r.last_seq;
    return Mismatch(next, next_anchor_seq + 1,
                    std::string(gap ? "a gap" : "an overlap") + ": " + before.path +
                        " ends at seq " + std::to_string(r.last_seq) +
                        ", the next file starts after seq " + std::to_string(next_anchor_seq));
  }
  if (!r.head_hash.empty() && next_anchor_hash != r.head_hash)
    return Mismatch(next, next_anchor_seq + 1,
                    "its first row is chained to " + next_anchor_hash + ", but " + before.path +
                        " ends with " + r.head_hash);
  return std::nullopt;
}

// Every `pruned` record naming an archive file finds that very file.
std::optional<Failure> CheckNamedFiles(const std::vector<FileCheck>& files,
                                       const std::string& dir) {
  std::map<std::string, const FileCheck*> by_name;
  for (const FileCheck& f : files) by_name[journal::ArchiveName(f.path)] = &f;
  for (const FileCheck& f : files) {
    for (const domain::Pruned& p : f.pruned) {
      if (p.archive.empty()) continue;
      auto it = by_name.find(p.archive);
      if (it == by_name.end() || !it->second->range)
        return Mismatch(dir + "/" + p.archive, p.first_seq,
                        "the pruned record of seq " + std::to_string(p.first_seq) + "-" +
                            std::to_string(p.last_seq) + " in " + f.path +
                            " names this archive file, which is missing");
      const journal::ArchiveRange& r = *it->second->range;
      if (r.anchor_seq + 1 != p.first_seq || r.last_seq != p.last_seq || r.head_hash != p.head_hash)
        return Mismatch(it->second->path, p.first_seq,
                        "it is not the file the pruned record in " + f.path +
                            " names (range or head differ: replaced)");
    }
  }
  return std::nullopt;
}

std::optional<Failure> CheckArchive(const std::string& dir, const FileCheck& journal_file,
                                    int64_t interest, std::vector<FileCheck>& files) {
  auto paths = journal::ListArchives(dir);
  if (!paths.ok()) return Unusable(paths.status().ToString());
  for (const std::string& path : *paths) {
    FileCheck a;
    if (auto f = CheckFile(path, interest, a)) return f;
    if (auto f = CheckOwnRange(a)) return f;
    if (!files.empty()) {
      if (auto f = CheckJoin(files.back(), a.range->anchor_seq, a.range->anchor_hash, path))
        return f;
    }
    files.push_back(std::move(a));
  }
  if (!files.empty()) {
    // The journal goes on where the last archive file ends.
    const std::string anchor = journal_file.chain.anchor == journal::chain::kGenesis
                                   ? std::string()
                                   : journal_file.chain.anchor;
    int64_t cut = 0;
    for (const domain::Pruned& p : journal_file.pruned) cut = std::max(cut, p.last_seq);
    if (auto f = CheckJoin(files.back(), cut, anchor, journal_file.path)) return f;
  }
  files.push_back(journal_file);
  return CheckNamedFiles(files, dir);
}

// The expected head is held, at its seq, by one of the files.
std::optional<Failure> CheckExpectedHead(const ExpectedHead& e, const std::vector<FileCheck>& files,
                                         const FileCheck& journal_file) {
  if (e.seq > journal_file.chain.head.seq)
    return Mismatch(journal_file.path, e.seq,
                    "the journal ends at seq " + std::to_string(journal_file.chain.head.seq) +
                        " before the expected head: its tail is gone");
  for (const FileCheck& f : files) {
    if (!f.chain.hash_at) continue;
    if (*f.chain.hash_at == e.hash) return std::nullopt;
    return Mismatch(f.path, e.seq,
                    "it holds " + *f.chain.hash_at + " at the expected head, not " + e.hash);
  }
  return Mismatch(journal_file.path, e.seq,
                  "no file holds a chained row at the expected head (pruned without an archive?)");
}

// One journal's report among several: every line names the journal it is
// about ("journal J: ..." already does; the others get "J: ").
void NameTheJournal(const std::string& text, const std::string& journal, const std::string& lead,
                    std::ostream& to) {
  const std::string named = journal + ":";
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    const bool led = line.rfind(lead, 0) == 0;
    const std::string rest = led ? line.substr(lead.size()) : line;
    const bool says = rest.rfind(named, 0) == 0 || rest.rfind("journal " + named, 0) == 0;
    to << (led ? lead : "") << (says ? "" : journal + ": ") << rest << "\n";
  }
}

// "run starts: 3, 2 chained and matching their rows (1 recorded before schema
// 11, which the chain cannot vouch for)": what proves the enforcement.
void PrintStarts(const journal::StartsCheck& s, std::ostream& out) {
  if (s.starts == 0) return;
  out << "run starts: " << s.starts << ", " << s.checked << " chained and matching their rows";
  std::string notes;
  if (s.before_cut)
    notes += std::to_string(s.before_cut) + " whose rows retention removed (in the archive)";
  if (s.unchained)
    notes += (notes.empty() ? "" : "; ") + std::to_string(s.unchained) +
             " recorded before schema 11, which the chain cannot vouch for";
  if (!notes.empty()) out << " (" << notes << ")";
  out << "\n";
}

}  // namespace

int RunJournalVerify(const std::vector<VerifyOptions>& journals, std::ostream& out,
                     std::ostream& err) {
  if (journals.size() == 1) return RunJournalVerify(journals.front(), out, err);
  int worst = kExitOk;
  std::string failed;
  for (const VerifyOptions& o : journals) {
    std::ostringstream one_out, one_err;
    const int rc = RunJournalVerify(o, one_out, one_err);
    NameTheJournal(one_out.str(), o.journal, "", out);
    NameTheJournal(one_err.str(), o.journal, "fencekeeper journal verify: ", err);
    worst = std::max(worst, rc);
    if (rc != kExitOk) failed += (failed.empty() ? "" : ", ") + o.journal;
  }
  if (failed.empty())
    out << "verified " << journals.size() << " journals: each ok\n";
  else
    err << "fencekeeper journal verify: not verified: " << failed << "\n";
  return worst;
}

int RunJournalVerify(const VerifyOptions& o, std::ostream& out, std::ostream& err) {
  const auto fail = [&](const Failure& f) {
    err << "fencekeeper journal verify: ";
    if (f.exit_code == kExitCheckFailed)
      err << (f.file.empty() ? o.journal : f.file) << ": mismatch at seq " << f.seq << ": ";
    err << f.why << "\n";
    return f.exit_code;
  };
  std::optional<ExpectedHead> expected;
  if (o.expect_head && !(expected = ParseHead(*o.expect_head)))
    return fail(Unusable("--expect-head: want SEQ:HASH (a seq and 64 lowercase hex digits), got '" +
                         *o.expect_head + "'"));
  const int64_t interest = expected ? expected->seq : 0;
  FileCheck journal_file;
  if (auto f = CheckFile(o.journal, interest, journal_file)) return fail(*f);
  std::vector<FileCheck> files;
  if (o.archive) {
    if (auto f = CheckArchive(*o.archive, journal_file, interest, files)) return fail(*f);
  } else {
    files.push_back(journal_file);
  }
  if (expected) {
    if (auto f = CheckExpectedHead(*expected, files, journal_file)) return fail(*f);
  }
  const journal::ChainCheck& chain = journal_file.chain;
  out << "journal " << o.journal << ": " << chain.rows << " chained rows";
  if (chain.unchained) out << " (" << chain.unchained << " before the chain started)";
  out << ", integrity ok, projections match the events\n";
  PrintStarts(journal_file.starts, out);
  if (o.archive)
    out << "archive " << *o.archive << ": " << files.size() - 1
        << " files, each intact, joined without gap or overlap\n";
  out << "head " << chain.head.ToString() << "\n";
  return kExitOk;
}

}  // namespace fk::cli
