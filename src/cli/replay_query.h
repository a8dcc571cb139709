// Which journal rows `replay` shows, read-only: the subjects named by
// --sandbox and --namespace (with the rows that give them context), inside
// the --since/--until window; and the state folded up to the window's end.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cli/commands.h"
#include "cli/replay_check.h"
#include "common/status.h"
#include "domain/journal_state.h"

namespace fk::journal {
class Journal;
}

namespace fk::cli {

// RFC 3339 ("2026-12-01T10:00:00Z", "…10:00:00.5+02:00") as ms since the epoch.
std::optional<int64_t> ParseTimeMs(std::string_view text);

// The rows --since and --until admit, both ends inclusive.
struct Window {
  int64_t from_seq = 1;
  int64_t until_seq = std::numeric_limits<int64_t>::max();
  int64_t from_ms = std::numeric_limits<int64_t>::min();
  int64_t until_ms = std::numeric_limits<int64_t>::max();

  bool Before(const domain::Event& e) const;  // earlier than --since
  bool After(const domain::Event& e) const;   // later than --until
};

// A seq bound ("42"), as opposed to a time or a duration. A seq names a row
// of one journal only, so with several journals it is refused.
bool IsSeqBound(std::string_view text);

// `last_row_ms`: when the journal's last row was recorded, which a duration
// ("15m": that long before it) is counted back from.
Result<Window> ResolveWindow(const ReplayOptions& o, std::optional<int64_t> last_row_ms);

class Selection {
 public:
  explicit Selection(const ReplayOptions& o);
  // A sandbox must be NAMESPACE/NAME; a namespace must not be empty.
  static Status Validate(const ReplayOptions& o);

  bool filtered() const { return !sandboxes_.empty() || !namespaces_.empty(); }
  // A row of a named subject, or context for one: the fence rows of the
  // namespaces involved, and every leadership row (the leader acts for all).
  bool Shows(const domain::Event& e) const;
  bool ShowsSandbox(const std::string& ns, const std::string& name) const;
  bool ShowsFences(const std::string& ns) const;

  // Remembers which named subjects have rows of their own.
  void Note(const domain::Event& e);
  // Why a named subject matched nothing ("" when each has rows).
  std::string Unmatched() const;

 private:
  std::set<std::string> sandboxes_, namespaces_, fence_namespaces_;
  std::set<std::string> seen_;                // named subjects that have rows
  std::set<std::string> known_in_namespace_;  // other sandboxes in the named ones' namespaces
};

struct ReplayReport {
  std::string journal;
  int schema_version = 0;
  std::vector<domain::Event> rows;  // shown, in seq order
  domain::JournalState state;       // folded up to the end of the window
  int64_t journal_rows = 0;         // every row in the file
  std::string first_time, last_time;
  // The writer id of every suspend intent in the file, shown or not: before
  // schema 8, the only rows that record which `run` wrote them (WriterOf in
  // replay_timeline.h).
  std::map<int64_t, std::string> intent_writers;
  // Each start of `run` recorded in the file, first_seq -> writer id (schema
  // 8): when there are any, every row's writer. Empty for older journals.
  std::map<int64_t, std::string> writer_starts;
};

// Walks the whole journal once; feeds `checker` (if any) every folded row.
// `path` names the journal in what is printed.
Result<ReplayReport> ReadReplay(const journal::Journal& j, const std::string& path,
                                const Window& window, Selection& selection, ReplayChecker* checker);

}  // namespace fk::cli
