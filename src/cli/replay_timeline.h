// Several journals as one timeline: the journals of one deployment's
// replicas (each leader writes its own) and the archive files retention
// wrote. Each journal is read, folded and checked on its own (replay_query.h);
// only the rows shown are merged, in time order, each naming its journal and
// the writer that wrote it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cli/replay_check.h"
#include "cli/replay_query.h"

namespace fk::cli {

// One --journal, read on its own.
struct JournalSource {
  std::string path;   // as typed
  std::string label;  // how rows name it: JournalLabels()
  ReplayReport report;
  std::unique_ptr<ReplayChecker> checker;  // set with --check
  CheckResult check;                       // check.checker points at *checker
};

struct TimelineRow {
  const domain::Event* event = nullptr;  // in its journal's report
  size_t journal = 0;                    // index into Timeline::journals
  std::string writer;                    // "" where the journal does not say
  int64_t ms = 0;                        // recorded_at, ms since the epoch
};

struct Timeline {
  std::vector<JournalSource> journals;  // in --journal order
  std::vector<TimelineRow> rows;        // in time order: Merge()
  bool merged() const { return journals.size() > 1; }
};

// Each file's name (basename); where two names are equal, the paths as typed.
std::vector<std::string> JournalLabels(const std::vector<std::string>& paths);

// The writer id of the `run` process that appended `e` to the journal `r`
// was read from. A suspend intent names its own. Since schema 8 the journal
// records each start of `run` (writer_starts): a row is the writer's of the
// latest start at or before its seq. Before that (older journals, and rows
// older than the first recorded start) only intents say: a process holds its
// journal's writer lock for its whole life and draws a new id at each start,
// so every row between two intents of one writer id is that writer's.
// Elsewhere: "".
std::string WriterOf(const ReplayReport& r, const domain::Event& e);

// Fills t.rows from the journals' shown rows: ordered by recorded time, ties
// by journal index, then seq. Each journal's rows keep their seq order (a
// merge, not a sort: a clock that stepped back does not reorder a journal).
void Merge(Timeline& t);

}  // namespace fk::cli
