// How `replay` words one journal row, for people: the subject, a short UID,
// the details column, and the legend that explains every abbreviation in it.
// Shared by the text timeline and the HTML page so both say the same thing.
#pragma once

#include <string>
#include <vector>

#include "domain/event.h"

namespace fk::cli {

// Like git's abbreviated hashes: enough to tell objects apart in a timeline;
// `--format json` keeps the whole UID.
inline constexpr size_t kShortUidLength = 8;
std::string ShortUid(const std::string& uid);  // "-" for none

// The writer id's first 8 characters, like ShortUid; "-" where unknown.
std::string ShortWriter(const std::string& writer);

// "namespace/name": the sandbox, or for a fence row the namespace/policy.
std::string Subject(const domain::Event& e);

// The details column: what the row says, in key=value words the legend explains.
std::string Describe(const domain::Event& e);

struct LegendEntry {
  std::string term;
  std::string meaning;
};
// Every abbreviation Describe() uses, in the order a reader meets them.
const std::vector<LegendEntry>& Legend();
// The columns several journals add: journal and writer.
const std::vector<LegendEntry>& TimelineLegend();

}  // namespace fk::cli
