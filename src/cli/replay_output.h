// The three ways `replay` shows what it read: an aligned text timeline with a
// legend, one JSON document, and a self-contained HTML page (replay_html.cc).
#pragma once

#include <iosfwd>
#include <string>

#include "cli/replay_check.h"
#include "cli/replay_query.h"

namespace fk::cli {

// The verdict line: "check: N events, D decisions re-run, integrity_check ok, 0 divergence(s)".
void PrintCheckLine(const CheckResult& check, std::ostream& out);

// Timeline, state, check line (if any) and legend.
void PrintReplayText(const ReplayReport& r, const Selection& selection, const CheckResult& check,
                     std::ostream& out);

void PrintReplayJson(const ReplayReport& r, const Selection& selection, const CheckResult& check,
                     std::ostream& out);

// The page as one string: inline CSS and script, no outside references.
std::string RenderReplayHtml(const ReplayReport& r, const ReplayOptions& o,
                             const CheckResult& check);

}  // namespace fk::cli
