// `fencekeeper replay`: the journal as a timeline (text, JSON or an HTML
// page), the state folded from it, and with --check a re-run of decide()
// over every recorded observation. Reading and filtering: replay_query.cc.
#include <fstream>
#include <ostream>

#include "cli/commands.h"
#include "cli/replay_output.h"
#include "cli/replay_query.h"
#include "journal/journal.h"

namespace fk::cli {
using namespace fk::domain;

namespace {

// When the journal's last row was recorded: what "--since 15m" counts back from.
std::optional<int64_t> LastRowMs(const journal::Journal& j) {
  std::optional<int64_t> ms;
  const int64_t last = j.state().last_seq;
  (void)j.ForEachEvent(last, last, [&](const Event& e) {
    ms = ParseTimeMs(e.recorded_at);
    return Status::Ok();
  });
  return ms;
}

// Integrity and the projection tables: the checks over the whole file.
Status CheckWholeFile(const journal::Journal& j, const ReplayOptions& o, const Selection& selection,
                      const ReplayReport& r, ReplayChecker& checker, CheckResult& result) {
  auto ic = j.IntegrityCheck();
  if (!ic.ok()) return ic.status();
  result.integrity = *ic;
  if (result.integrity != "ok") checker.Diverge(0, "integrity_check: " + result.integrity);
  // The projection tables must equal what folding the whole journal gives.
  if (!o.since && !o.until && !selection.filtered() && !(r.state == j.state())) {
    checker.Diverge(r.state.last_seq,
                    "projection tables differ from the state folded from the events");
  }
  return Status::Ok();
}

Status WriteHtml(const ReplayReport& r, const ReplayOptions& o, const CheckResult& check,
                 std::ostream& out) {
  std::ofstream file(*o.html, std::ios::binary | std::ios::trunc);
  file << RenderReplayHtml(r, o, check);
  file.close();
  if (!file) return Status::IOError("cannot write " + *o.html);
  out << "wrote " << *o.html << ": " << r.rows.size() << " of " << r.journal_rows
      << " rows; open it in a browser (it needs no network)\n";
  return Status::Ok();
}

int Render(const ReplayReport& r, const ReplayOptions& o, const Selection& selection,
           const CheckResult& check, std::ostream& out, std::ostream& err) {
  if (o.html) {
    if (Status s = WriteHtml(r, o, check, out); !s.ok()) {
      err << "fencekeeper replay: " << s.ToString() << "\n";
      return kExitUnusable;
    }
    if (check.checker && !o.quiet) PrintCheckLine(check, out);
  } else if (o.json) {
    PrintReplayJson(r, selection, check, out);
  } else if (o.quiet) {
    PrintCheckLine(check, out);
  } else {
    PrintReplayText(r, selection, check, out);
  }
  return kExitOk;
}

int ReportDivergences(const ReplayChecker& c, std::ostream& err) {
  if (c.divergence_count() == 0) return kExitOk;
  for (const auto& d : c.divergences())
    err << "fencekeeper replay --check: divergence at seq " << d.seq << ": " << d.what << "\n";
  if (c.divergence_count() > c.divergences().size())
    err << "fencekeeper replay --check: and " << c.divergence_count() - c.divergences().size()
        << " more\n";
  return kExitCheckFailed;
}

}  // namespace

int RunReplay(const ReplayOptions& options, std::ostream& out, std::ostream& err) {
  if (Status s = Selection::Validate(options); !s.ok()) {
    err << "fencekeeper replay: " << s.message() << "\n";
    return kExitUnusable;
  }
  journal::OpenOptions open;
  open.read_only = true;
  auto j = journal::Journal::Open(options.journal, open);
  if (!j.ok()) {
    err << "fencekeeper replay: " << j.status().ToString() << "\n";
    return kExitUnusable;
  }
  auto window = ResolveWindow(options, LastRowMs(**j));
  if (!window.ok()) {
    err << "fencekeeper replay: " << window.status().message() << "\n";
    return kExitUnusable;
  }
  Selection selection(options);
  ReplayChecker checker;
  CheckResult check;
  if (options.check) check.checker = &checker;
  auto report = ReadReplay(**j, options, *window, selection, check.checker ? &checker : nullptr);
  if (!report.ok()) {
    err << "fencekeeper replay: " << report.status().ToString() << "\n";
    return options.check ? kExitCheckFailed : kExitUnusable;
  }
  if (const std::string why = selection.Unmatched(); !why.empty()) {
    err << "fencekeeper replay: " << why << " in " << options.journal << "\n";
    return kExitNoRows;
  }
  if (report->rows.empty() && (options.since || options.until)) {
    err << "fencekeeper replay: no row matches the filters between --since and --until (the "
           "journal spans "
        << report->first_time << " to " << report->last_time << ", " << report->journal_rows
        << " rows)\n";
    return kExitNoRows;
  }
  if (options.check) {
    if (Status s = CheckWholeFile(**j, options, selection, *report, checker, check); !s.ok()) {
      err << "fencekeeper replay: " << s.ToString() << "\n";
      return kExitUnusable;
    }
  }
  if (int rc = Render(*report, options, selection, check, out, err); rc != kExitOk) return rc;
  return options.check ? ReportDivergences(checker, err) : kExitOk;
}

}  // namespace fk::cli
