#include "sim/fault_spec.h"

#include <algorithm>
#include <charconv>

namespace fk::sim {

// VERB:RESOURCE:STATUS[:RETRY_AFTER[:COUNT]]; an empty RETRY_AFTER is none
// (as in patch:sandboxes:503::2), an absent COUNT is every matching request.
std::optional<FaultRule> ParseFaultSpec(const std::string& spec) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t c; (c = spec.find(':', start)) != std::string::npos; start = c + 1)
    parts.push_back(spec.substr(start, c - start));
  parts.push_back(spec.substr(start));
  if (parts.size() < 3 || parts.size() > 5) return std::nullopt;
  static const std::vector<std::string> kVerbs = {"*",      "get",    "list",  "watch",
                                                  "create", "update", "patch", "delete"};
  if (std::find(kVerbs.begin(), kVerbs.end(), parts[0]) == kVerbs.end() || parts[1].empty())
    return std::nullopt;
  auto number = [](const std::string& text, int if_empty) -> std::optional<int> {
    if (text.empty()) return if_empty;
    int value = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
    return value;
  };
  FaultRule rule;
  rule.verb = parts[0];
  rule.resource = parts[1];
  const auto status = number(parts[2], 0);
  const auto retry_after = number(parts.size() > 3 ? parts[3] : "", 0);
  const auto count = number(parts.size() > 4 ? parts[4] : "", -1);
  if (!status || *status < 100 || *status > 599 || !retry_after || *retry_after < 0 || !count ||
      *count == 0)
    return std::nullopt;
  rule.status = *status;
  rule.retry_after_seconds = *retry_after;
  rule.count = *count;
  return rule;
}

}  // namespace fk::sim
