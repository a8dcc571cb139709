#include "cli/columns.h"

#include <algorithm>
#include <ostream>

namespace fk::cli {

void PrintAligned(const std::vector<Line>& lines, std::ostream& out) {
  if (lines.empty()) return;
  std::vector<size_t> width(lines.front().size(), 0);
  for (const auto& l : lines)
    for (size_t c = 0; c < l.size(); ++c) width[c] = std::max(width[c], l[c].size());
  for (const auto& l : lines) {
    std::string text;
    for (size_t c = 0; c + 1 < l.size(); ++c)
      text += l[c] + std::string(width[c] - l[c].size() + 2, ' ');
    out << text << l.back() << "\n";
  }
}

}  // namespace fk::cli
