// The text timeline: columns aligned to the widest cell, short UIDs, and the
// legend at the end so a reader can decode `pods=WS` without the source.
#include <algorithm>
#include <array>
#include <ostream>

#include "cli/replay_describe.h"
#include "cli/replay_output.h"

namespace fk::cli {
using namespace fk::domain;

namespace {

constexpr size_t kColumns = 6;  // seq, time, event, subject, uid, details
using Line = std::array<std::string, kColumns>;

Line Cells(const Event& e) {
  return {std::to_string(e.seq), e.recorded_at, ToString(e.kind()), Subject(e),
          ShortUid(e.uid),       Describe(e)};
}

// Pads every column but the last to its widest cell, two spaces apart.
void PrintAligned(const std::vector<Line>& lines, std::ostream& out) {
  std::array<size_t, kColumns> width{};
  for (const auto& l : lines)
    for (size_t c = 0; c < kColumns; ++c) width[c] = std::max(width[c], l[c].size());
  for (const auto& l : lines) {
    std::string text;
    for (size_t c = 0; c + 1 < kColumns; ++c)
      text += l[c] + std::string(width[c] - l[c].size() + 2, ' ');
    out << text << l[kColumns - 1] << "\n";
  }
}

void PrintFence(const FenceRecord& f, std::ostream& out) {
  out << "  fence   " << f.ns << "/" << f.policy << "  ";
  if (!f.observation.present)
    out << "absent";
  else
    out << "uid=" << ShortUid(f.observation.uid) << " generation=" << f.observation.generation
        << " intact=" << (f.observation.intact ? "yes" : "no");
  out << "  (seq " << f.seq << ")\n";
}

void PrintSandbox(const SandboxRecord& r, std::ostream& out) {
  out << "  sandbox " << r.ns << "/" << r.name << "  uid=" << ShortUid(r.uid);
  if (r.decision) {
    out << " verdict=" << ToString(r.decision->verdict);
    if (r.decision->reason != Reason::kNone) out << " reason=" << ToString(r.decision->reason);
  }
  if (r.history.pending_intent_seq) out << " pending-intent=" << *r.history.pending_intent_seq;
  if (r.history.applied_generation)
    out << " suspended-at-generation=" << *r.history.applied_generation;
  out << "\n";
}

void PrintState(const JournalState& s, const Selection& selection, std::ostream& out) {
  out << "\nstate after seq " << s.last_seq << ":\n";
  for (const auto& [key, f] : s.fences)
    if (selection.ShowsFences(f.ns)) PrintFence(f, out);
  for (const auto& [uid, r] : s.sandboxes)
    if (selection.ShowsSandbox(r.ns, r.name)) PrintSandbox(r, out);
}

void PrintLegend(std::ostream& out) {
  size_t width = 0;
  for (const auto& l : Legend()) width = std::max(width, l.term.size());
  out << "\nlegend:\n";
  for (const auto& l : Legend())
    out << "  " << l.term << std::string(width - l.term.size() + 2, ' ') << l.meaning << "\n";
}

}  // namespace

void PrintCheckLine(const CheckResult& check, std::ostream& out) {
  out << "check: " << check.checker->events() << " events, " << check.checker->decisions_checked()
      << " decisions re-run, integrity_check " << check.integrity << ", "
      << check.checker->divergence_count() << " divergence(s)\n";
}

void PrintReplayText(const ReplayReport& r, const Selection& selection, const CheckResult& check,
                     std::ostream& out) {
  out << "journal " << r.journal << " (schema version " << r.schema_version << "), "
      << r.rows.size() << " of " << r.journal_rows << " rows shown\n";
  std::vector<Line> lines{{"SEQ", "TIME", "EVENT", "SUBJECT", "UID", "DETAILS"}};
  for (const auto& e : r.rows) lines.push_back(Cells(e));
  PrintAligned(lines, out);
  PrintState(r.state, selection, out);
  if (check.checker) {
    out << "\n";
    PrintCheckLine(check, out);
  }
  PrintLegend(out);
}

}  // namespace fk::cli
