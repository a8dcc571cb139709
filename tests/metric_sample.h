// One series' value in a Prometheus text scrape, for tests that count what
// /metrics says rather than eyeball it.
#pragma once

#include <cmath>
#include <sstream>
#include <string>

#include "reconciler/metrics.h"

namespace fk::testing {

// The value of one series ("name{label=\"v\"}" exactly as exposed: labels in
// alphabetical order), or NaN if the scrape does not have it.
inline double Sample(const std::string& scrape, const std::string& series) {
  std::istringstream in(scrape);
  for (std::string line; std::getline(in, line);) {
    if (line.size() > series.size() && line.compare(0, series.size(), series) == 0 &&
        line[series.size()] == ' ')
      return std::stod(line.substr(series.size() + 1));
  }
  return std::nan("");
}

inline double Sample(const reconciler::Metrics& m, const std::string& series) {
  return Sample(m.Render(), series);
}

}  // namespace fk::testing
