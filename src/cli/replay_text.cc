// The text timeline: columns aligned to the widest cell, short UIDs, and the
// legend at the end so a reader can decode `pods=WS` without the source.
// Several journals: time first, then the journal and writer of each row.
#include <algorithm>
#include <ostream>

#include "cli/columns.h"
#include "cli/replay_describe.h"
#include "cli/replay_output.h"

namespace fk::cli {
using namespace fk::domain;

namespace {

Line Cells(const Event& e) {
  return {std::to_string(e.seq), e.recorded_at, ToString(e.kind()), Subject(e),
          ShortUid(e.uid),       Describe(e)};
}

Line MergedCells(const Timeline& t, const TimelineRow& row) {
  const Event& e = *row.event;
  return {e.recorded_at,           t.journals[row.journal].label,
          ShortWriter(row.writer), std::to_string(e.seq),
          ToString(e.kind()),      Subject(e),
          ShortUid(e.uid),         Describe(e)};
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
  out << "  sandbox " << r.ns.str() << "/" << r.name.str() << "  uid=" << ShortUid(r.uid.str());
  if (r.decision) {
    out << " verdict=" << ToString(r.decision->verdict);
    if (r.decision->reason != Reason::kNone) out << " reason=" << ToString(r.decision->reason);
  }
  if (r.history.pending_intent_seq) out << " pending-intent=" << *r.history.pending_intent_seq;
  if (r.history.applied_generation)
    out << " suspended-at-generation=" << *r.history.applied_generation;
  out << "\n";
}

// `of`: " of LABEL" with several journals.
void PrintState(const JournalState& s, const Selection& selection, std::ostream& out,
                const std::string& of = "") {
  out << "\nstate" << of << " after seq " << s.last_seq << ":\n";
  for (const auto& [key, f] : s.fences)
    if (selection.ShowsFences(f.ns)) PrintFence(f, out);
  for (const auto& [uid, r] : s.sandboxes)
    if (selection.ShowsSandbox(r.ns.str(), r.name.str())) PrintSandbox(r, out);
}

void PrintLegend(std::ostream& out, bool merged = false) {
  std::vector<LegendEntry> legend = Legend();
  if (merged) legend.insert(legend.begin(), TimelineLegend().begin(), TimelineLegend().end());
  size_t width = 0;
  for (const auto& l : legend) width = std::max(width, l.term.size());
  out << "\nlegend:\n";
  for (const auto& l : legend)
    out << "  " << l.term << std::string(width - l.term.size() + 2, ' ') << l.meaning << "\n";
}

}  // namespace

void PrintCheckLine(const CheckResult& check, std::ostream& out) {
  out << "check: " << check.checker->events() << " events, " << check.checker->decisions_checked()
      << " decisions re-run, integrity_check " << check.integrity << ", "
      << check.checker->divergence_count() << " divergence(s)\n";
}

void PrintCheckLines(const Timeline& t, std::ostream& out) {
  for (const auto& j : t.journals) {
    if (t.merged()) out << j.label << ": ";
    PrintCheckLine(j.check, out);
  }
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

void PrintTimelineText(const Timeline& t, const Selection& selection, std::ostream& out) {
  int64_t total = 0;
  for (const auto& j : t.journals) total += j.report.journal_rows;
  out << t.journals.size() << " journals, " << t.rows.size() << " of " << total
      << " rows shown, in time order:\n";
  for (const auto& j : t.journals)
    out << "  " << j.label << (j.label == j.path ? "" : "  " + j.path) << " (schema version "
        << j.report.schema_version << "), " << j.report.rows.size() << " of "
        << j.report.journal_rows << " rows\n";
  std::vector<Line> lines{
      {"TIME", "JOURNAL", "WRITER", "SEQ", "EVENT", "SUBJECT", "UID", "DETAILS"}};
  for (const auto& row : t.rows) lines.push_back(MergedCells(t, row));
  PrintAligned(lines, out);
  for (const auto& j : t.journals) PrintState(j.report.state, selection, out, " of " + j.label);
  if (t.journals.front().check.checker) {
    out << "\n";
    PrintCheckLines(t, out);
  }
  PrintLegend(out, true);
}

}  // namespace fk::cli
