// The stylesheet and script of the `replay --html` page, inlined into it: the
// page must open from a file with no network, so nothing is fetched.
#pragma once

namespace fk::cli {

extern const char kReplayPageCss[];
// Draws the swimlane timeline (#fk-lanes) from the JSON in #fk-data. It only
// ever sets textContent and attributes: journal text is never parsed as markup.
extern const char kReplayPageJs[];

}  // namespace fk::cli
