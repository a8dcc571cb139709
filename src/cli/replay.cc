// `fencekeeper replay`: the journal as a timeline (text, JSON or an HTML
// page), the state folded from it, and with --check a re-run of decide()
// over every recorded observation. Several journals: each is read, folded
// and checked on its own, then their rows are merged in time order
// (replay_timeline.h). Reading and filtering: replay_query.cc.
#include <filesystem>
#include <fstream>
#include <ostream>

#include "cli/commands.h"
#include "cli/replay_output.h"
#include "cli/replay_query.h"
#include "cli/replay_timeline.h"
#include "journal/journal.h"

namespace fk::cli {
using namespace fk::domain;

namespace {

using Journals = std::vector<std::unique_ptr<journal::Journal>>;

// When the journal's last row was recorded: what "--since 15m" counts back from.
std::optional<int64_t> LastRowMs(const journal::Journal& j) {
  std::optional<int64_t> ms;
  const int64_t last = j.state().last_seq;
  // Unreadable: no last row (a relative bound then counts back from the
  // epoch, i.e. takes every row), and the walk that prints rows reports the
  // read error itself.
  (void)j.ForEachEvent(last, last, [&](const Event& e) {
    ms = ParseTimeMs(e.recorded_at);
    return Status::Ok();
  });
  return ms;
}

// What must hold before any file is read: the names, and with several
// journals bounds that mean the same in each (a seq names a row of one).
Status ValidateOptions(const ReplayOptions& o) {
  if (o.journals.empty()) return Status::InvalidArgument("--journal is required");
  if (Status s = Selection::Validate(o); !s.ok()) return s;
  if (o.journals.size() < 2) return Status::Ok();
  for (const auto& [flag, value] : {std::pair{"--since", &o.since}, {"--until", &o.until}}) {
    if (*value && IsSeqBound(**value))
      return Status::InvalidArgument(
          std::string(flag) + " " + **value +
          ": a seq names a row of one journal only; with several journals give an RFC 3339 "
          "time (2026-12-01T10:00:00Z) or a duration before the latest last row (15m)");
  }
  for (size_t i = 0; i < o.journals.size(); ++i) {
    for (size_t k = i + 1; k < o.journals.size(); ++k) {
      std::error_code ec;
      if (std::filesystem::equivalent(o.journals[i], o.journals[k], ec))
        return Status::InvalidArgument("--journal " + o.journals[k] + " is the same file as " +
                                       o.journals[i] + ": its rows would show twice");
    }
  }
  return Status::Ok();
}

// Every file opened before anything is printed: one bad file, nothing shown.
Result<Journals> OpenAll(const std::vector<std::string>& paths) {
  Journals all;
  journal::OpenOptions open;
  open.read_only = true;
  for (const auto& path : paths) {
    auto j = journal::Journal::Open(path, open);
    if (!j.ok()) return j.status();
    all.push_back(std::move(*j));
  }
  return all;
}

Result<Window> WindowOf(const ReplayOptions& o, const Journals& journals) {
  std::optional<int64_t> last_ms;
  for (const auto& j : journals) {
    const auto ms = LastRowMs(*j);
    if (ms && (!last_ms || *ms > *last_ms)) last_ms = ms;
  }
  return ResolveWindow(o, last_ms);
}

// Integrity and the projection tables: the checks over the whole file.
Status CheckWholeFile(const journal::Journal& j, const ReplayOptions& o, const Selection& selection,
                      JournalSource& source) {
  auto ic = j.IntegrityCheck();
  if (!ic.ok()) return ic.status();
  source.check.integrity = *ic;
  if (*ic != "ok") source.checker->Diverge(0, "integrity_check: " + *ic);
  // The projection tables must equal what folding the whole journal gives.
  if (!o.since && !o.until && !selection.filtered() && !(source.report.state == j.state())) {
    source.checker->Diverge(source.report.state.last_seq,
                            "projection tables differ from the state folded from the events");
  }
  return Status::Ok();
}

// Why the filters show nothing ("" when they show something).
std::string NothingShown(const Timeline& t, const ReplayOptions& o, const Selection& selection) {
  if (std::string why = selection.Unmatched(); !why.empty())
    return why + " in " + (t.merged() ? "any of the journals" : o.journals.front());
  if (!t.rows.empty() || (!o.since && !o.until)) return "";
  std::string spans;
  for (const auto& j : t.journals) {
    spans += std::string(spans.empty() ? "" : "; ") + (t.merged() ? j.label + " spans " : "") +
             j.report.first_time + " to " + j.report.last_time + ", " +
             std::to_string(j.report.journal_rows) + " rows";
  }
  return "no row matches the filters between --since and --until (the " +
         std::string(t.merged() ? "journals span: " : "journal spans ") + spans + ")";
}

// Reads every journal (and with --check, checks it) into `t`: 0, or the exit code.
int ReadAll(const ReplayOptions& o, const Journals& journals, Timeline& t, std::ostream& err) {
  auto window = WindowOf(o, journals);
  if (!window.ok()) {
    err << "fencekeeper replay: " << window.status().message() << "\n";
    return kExitUnusable;
  }
  Selection selection(o);
  const auto labels = JournalLabels(o.journals);
  for (size_t i = 0; i < journals.size(); ++i) {
    JournalSource& source = t.journals.emplace_back();
    source.path = o.journals[i];
    source.label = labels[i];
    if (o.check) source.checker = std::make_unique<ReplayChecker>();
    source.check.checker = source.checker.get();
    auto report = ReadReplay(*journals[i], source.path, *window, selection, source.checker.get());
    if (!report.ok()) {
      err << "fencekeeper replay: " << report.status().ToString() << "\n";
      return o.check ? kExitCheckFailed : kExitUnusable;
    }
    source.report = std::move(*report);
    if (!o.check) continue;
    if (Status s = CheckWholeFile(*journals[i], o, selection, source); !s.ok()) {
      err << "fencekeeper replay: " << s.ToString() << "\n";
      return kExitUnusable;
    }
  }
  Merge(t);
  if (const std::string why = NothingShown(t, o, selection); !why.empty()) {
    err << "fencekeeper replay: " << why << "\n";
    return kExitNoRows;
  }
  return kExitOk;
}

Status WriteHtml(const Timeline& t, const ReplayOptions& o, std::ostream& out) {
  std::error_code ec;
  if (!o.force && std::filesystem::exists(*o.html, ec))
    return Status::Refused(*o.html + " exists; give another file, or --force to replace it");
  const std::string page = RenderReplayHtml(t, o);
  std::ofstream file(*o.html, std::ios::binary | std::ios::trunc);
  file << page;
  file.close();
  if (!file) return Status::IOError("cannot write " + *o.html);
  size_t total = 0;
  for (const auto& j : t.journals) total += j.report.journal_rows;
  out << "wrote " << *o.html << ": " << t.rows.size() << " of " << total
      << " rows; open it in a browser (it needs no network)\n";
  return Status::Ok();
}

int Render(const Timeline& t, const ReplayOptions& o, const Selection& selection, std::ostream& out,
           std::ostream& err) {
  if (o.html) {
    if (Status s = WriteHtml(t, o, out); !s.ok()) {
      err << "fencekeeper replay: " << s.message() << "\n";
      return kExitUnusable;
    }
    if (o.check && !o.quiet) PrintCheckLines(t, out);
  } else if (o.json) {
    t.merged() ? PrintTimelineJson(t, selection, out)
               : PrintReplayJson(t.journals[0].report, selection, t.journals[0].check, out);
  } else if (o.check) {
    // What was checked, not the whole timeline again: `replay` shows that.
    PrintCheckLines(t, out);
  } else {
    t.merged() ? PrintTimelineText(t, selection, out)
               : PrintReplayText(t.journals[0].report, selection, t.journals[0].check, out);
  }
  return kExitOk;
}

// Each journal's divergences, naming the journal when there are several.
int ReportDivergences(const Timeline& t, std::ostream& err) {
  int rc = kExitOk;
  for (const auto& j : t.journals) {
    const ReplayChecker& c = *j.checker;
    if (c.divergence_count() == 0) continue;
    rc = kExitCheckFailed;
    const std::string where = t.merged() ? j.label + ": " : "";
    for (const auto& d : c.divergences())
      err << "fencekeeper replay --check: " << where << "divergence at seq " << d.seq << ": "
          << d.what << "\n";
    if (c.divergence_count() > c.divergences().size())
      err << "fencekeeper replay --check: " << where << "and "
          << c.divergence_count() - c.divergences().size() << " more\n";
    if (t.merged())
      err << "fencekeeper replay --check: " << j.label << " (" << j.path << ") failed\n";
  }
  return rc;
}

}  // namespace

int RunReplay(const ReplayOptions& options, std::ostream& out, std::ostream& err) {
  if (Status s = ValidateOptions(options); !s.ok()) {
    err << "fencekeeper replay: " << s.message() << "\n";
    return kExitUnusable;
  }
  auto journals = OpenAll(options.journals);
  if (!journals.ok()) {
    err << "fencekeeper replay: " << journals.status().ToString() << "\n";
    return kExitUnusable;
  }
  Timeline timeline;
  if (int rc = ReadAll(options, *journals, timeline, err); rc != kExitOk) return rc;
  if (int rc = Render(timeline, options, Selection(options), out, err); rc != kExitOk) return rc;
  return options.check ? ReportDivergences(timeline, err) : kExitOk;
}

}  // namespace fk::cli
