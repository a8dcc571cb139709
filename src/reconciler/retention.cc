#include "reconciler/retention.h"

#include <algorithm>

#include "common/log.h"

namespace fk::reconciler {

journal::PruneOptions Retention::StepOptions() const {
  const int64_t now_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(time_.Now().time_since_epoch()).count();
  journal::PruneOptions o;
  o.cutoff_ms = now_ms - options_.retention.count();
  o.max_rows = kMaxRows;
  o.min_rows = kMinRows;
  o.overdue_ms =
      std::min<int64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(kMaxDelay).count(),
                        options_.retention.count() / 10);
  o.archive_dir = options_.archive_dir;
  return o;
}

int64_t Retention::Tick() {
  if (!enabled()) return 0;
  int64_t removed = 0;
  for (int step = 0; step < kMaxStepsPerTick; ++step) {
    auto r = journal_.Prune(StepOptions());
    if (!r.ok()) {
      Fail(r.status());
      break;
    }
    Report(*r);
    removed += r->rows;
    if (r->rows < static_cast<int64_t>(kMaxRows)) break;  // nothing more is due
  }
  return removed;
}

void Retention::Report(const journal::PruneReport& step) {
  if (failing_) {
    log::Info("journal pruning works again").Str("journal", journal_.path());
    failing_ = false;
  }
  if (step.held_by != 0 && step.held_by != held_by_) {
    log::Warn("journal pruning is held back by an intent the state still needs")
        .Str("journal", journal_.path())
        .Seq(step.held_by)
        .Str("why",
             "a pending or refused suspend intent older than the retention keeps its row "
             "and every later one; settle it (docs/retention.md)");
  }
  held_by_ = step.held_by;
  if (step.rows == 0) return;
  rows_pruned_ += static_cast<uint64_t>(step.rows);
  log::Info("journal pruned")
      .Str("journal", journal_.path())
      .Int("first_seq", step.first_seq)
      .Int("last_seq", step.last_seq)
      .Int("rows", step.rows)
      .Int("subjects", step.subjects_removed)
      .Str("archive", step.archive);
}

void Retention::Fail(const Status& s) {
  ++failures_;
  if (failing_) return;  // said once; the metric counts every try
  failing_ = true;
  log::Error("journal pruning stopped: nothing is removed until it works again")
      .Str("journal", journal_.path())
      .Str("archive", options_.archive_dir)
      .Error(s)
      .Str("effect", "history is kept (the journal grows); transitions go on");
}

}  // namespace fk::reconciler
