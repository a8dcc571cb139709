// The three ways `replay` shows what it read: an aligned text timeline with a
// legend, one JSON document, and a self-contained HTML page (replay_html.cc).
// One journal keeps the one-journal layout; several (replay_timeline.h) add
// the journal and writer of each row.
#pragma once

#include <iosfwd>
#include <string>

#include "cli/replay_check.h"
#include "cli/replay_query.h"
#include "cli/replay_timeline.h"

namespace fk::cli {

// The verdict line: "check: N events, D decisions re-run, integrity_check ok, 0 divergence(s)".
void PrintCheckLine(const CheckResult& check, std::ostream& out);
// One verdict line per journal ("LABEL: check: ..." when there are several).
void PrintCheckLines(const Timeline& t, std::ostream& out);

// Timeline, state, check line (if any) and legend.
void PrintReplayText(const ReplayReport& r, const Selection& selection, const CheckResult& check,
                     std::ostream& out);
// Several journals: one timeline in time order, each journal's state and check.
void PrintTimelineText(const Timeline& t, const Selection& selection, std::ostream& out);

void PrintReplayJson(const ReplayReport& r, const Selection& selection, const CheckResult& check,
                     std::ostream& out);
// Several journals: the journals (state, check) and the rows, each naming its
// journal and writer.
void PrintTimelineJson(const Timeline& t, const Selection& selection, std::ostream& out);

// The page as one string: inline CSS and script, no outside references.
std::string RenderReplayHtml(const Timeline& t, const ReplayOptions& o);

}  // namespace fk::cli
