#include "cli/replay_timeline.h"

#include <filesystem>
#include <iterator>
#include <limits>
#include <map>

namespace fk::cli {
using namespace fk::domain;

std::vector<std::string> JournalLabels(const std::vector<std::string>& paths) {
  std::vector<std::string> labels;
  std::map<std::string, int> uses;
  for (const auto& p : paths) {
    labels.push_back(std::filesystem::path(p).filename().string());
    ++uses[labels.back()];
  }
  for (size_t i = 0; i < labels.size(); ++i)
    if (uses[labels[i]] > 1) labels[i] = paths[i];
  return labels;
}

std::string WriterOf(const ReplayReport& r, const Event& e) {
  if (const auto* i = std::get_if<SuspendIntent>(&e.body)) return i->writer;
  // The latest start at or before the row (an intent that disagrees keeps its
  // own id, above: it is what the row itself says).
  if (const auto after = r.writer_starts.upper_bound(e.seq); after != r.writer_starts.begin())
    return std::prev(after)->second;
  const auto next = r.intent_writers.upper_bound(e.seq);
  if (next == r.intent_writers.end() || next == r.intent_writers.begin()) return "";
  const auto before = std::prev(next);
  return before->second == next->second ? before->second : "";
}

void Merge(Timeline& t) {
  std::vector<size_t> at(t.journals.size(), 0);  // each journal's next row
  std::vector<int64_t> last_ms(t.journals.size(), std::numeric_limits<int64_t>::min());
  const auto ms_of = [&](size_t j) {
    // A time that does not parse sorts with the row before it.
    const auto ms = ParseTimeMs(t.journals[j].report.rows[at[j]].recorded_at);
    return ms.value_or(last_ms[j]);
  };
  for (;;) {
    size_t best = t.journals.size();
    int64_t best_ms = 0;
    for (size_t j = 0; j < t.journals.size(); ++j) {
      if (at[j] == t.journals[j].report.rows.size()) continue;
      const int64_t ms = ms_of(j);
      if (best == t.journals.size() || ms < best_ms) best = j, best_ms = ms;
    }
    if (best == t.journals.size()) return;
    const ReplayReport& r = t.journals[best].report;
    const Event& e = r.rows[at[best]++];
    last_ms[best] = best_ms;
    t.rows.push_back({&e, best, WriterOf(r, e), best_ms});
  }
}

}  // namespace fk::cli
