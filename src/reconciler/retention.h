// Retention (`run --journal-retention`, `--journal-archive`; docs/retention.md):
// once a minute, the journal's rows older than the retention go, in steps
// of at most kMaxRows, each written to an archive file first when an archive
// directory is set. A step that fails (the archive cannot be written, the
// disk is full) removes nothing and is said loudly; transitions go on, and
// the next minute tries again.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "common/clock.h"
#include "journal/journal.h"

namespace fk::reconciler {

struct RetentionOptions {
  std::chrono::milliseconds retention{0};  // 0: keep everything
  std::string archive_dir;                 // "": no archive
};

class Retention {
 public:
  static constexpr size_t kMaxRows = 250;  // per step: one short transaction (a few ms)
  static constexpr size_t kMinRows = 128;  // a smaller step waits...
  // ...unless its oldest row is this far past the cutoff (or a tenth of the
  // retention, if less): each step costs a `pruned` row and an archive file.
  static constexpr std::chrono::hours kMaxDelay{1};
  static constexpr int kMaxStepsPerTick = 400;

  Retention(journal::Journal& journal, RetentionOptions options, const TimeSource& time)
      : journal_(journal), options_(std::move(options)), time_(time) {}

  bool enabled() const { return options_.retention.count() > 0; }
  // Prunes what is due now; returns the rows removed.
  int64_t Tick();

  uint64_t rows_pruned() const { return rows_pruned_.load(); }
  uint64_t failures() const { return failures_.load(); }

 private:
  journal::PruneOptions StepOptions() const;
  void Report(const journal::PruneReport& step);
  void Fail(const Status& s);

  journal::Journal& journal_;
  const RetentionOptions options_;
  const TimeSource& time_;
  std::atomic<uint64_t> rows_pruned_{0};
  std::atomic<uint64_t> failures_{0};
  bool failing_ = false;  // the last step failed (said once, and when it recovers)
  int64_t held_by_ = 0;   // the intent last said to hold the cut back
};

}  // namespace fk::reconciler
