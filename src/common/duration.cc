#include "common/duration.h"

#include <cctype>
#include <string>

namespace fk {

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view s) {
  if (s == "0") return std::chrono::milliseconds(0);
  if (s.empty()) return std::nullopt;
  double total_ms = 0;
  size_t i = 0;
  while (i < s.size()) {
    const size_t start = i;
    while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
    if (i == start) return std::nullopt;
    double value;
    try {
      size_t used = 0;
      value = std::stod(std::string(s.substr(start, i - start)), &used);
      if (used != i - start) return std::nullopt;
    } catch (...) {
      return std::nullopt;
    }
    const size_t unit_start = i;
    while (i < s.size() && !std::isdigit(static_cast<unsigned char>(s[i])) && s[i] != '.') ++i;
    const std::string_view unit = s.substr(unit_start, i - unit_start);
    double factor;
    if (unit == "ns")
      factor = 1e-6;
    else if (unit == "us" || unit == "\xC2\xB5s")
      factor = 1e-3;
    else if (unit == "ms")
      factor = 1;
    else if (unit == "s")
      factor = 1000;
    else if (unit == "m")
      factor = 60'000;
    else if (unit == "h")
      factor = 3'600'000;
    else if (unit == "d")  // beyond Go: retention is counted in days
      factor = 86'400'000;
    else
      return std::nullopt;
    total_ms += value * factor;
  }
  // Converting a double beyond int64 is undefined (x86 yields INT64_MIN, a
  // negative duration); found by fuzzing (tests/fuzz/regressions/duration/).
  if (!(total_ms < 0x1p63)) return std::nullopt;
  return std::chrono::milliseconds(static_cast<int64_t>(total_ms));
}

}  // namespace fk
