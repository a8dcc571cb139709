// Aligned text columns, as `replay` and `status` print them.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace fk::cli {

using Line = std::vector<std::string>;  // one cell per column

// Pads every column but the last to its widest cell, two spaces apart.
void PrintAligned(const std::vector<Line>& lines, std::ostream& out);

}  // namespace fk::cli
