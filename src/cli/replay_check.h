// `replay --check`: re-runs decide() over every recorded observation and
// checks each row against the state the journal before it implies.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "domain/journal_state.h"

namespace fk::cli {

struct Divergence {
  int64_t seq = 0;
  std::string what;
};

class ReplayChecker {
 public:
  // Divergences kept with their words; more are counted only.
  static constexpr size_t kKept = 20;

  // `before` is the state folded from every row before `e`. Rows outside the
  // selection are checked for order only.
  void Visit(const domain::JournalState& before, const domain::Event& e, bool selected);
  void Diverge(int64_t seq, std::string what);

  const std::vector<Divergence>& divergences() const { return kept_; }
  size_t divergence_count() const { return count_; }
  size_t decisions_checked() const { return decisions_checked_; }
  size_t events() const { return events_; }

 private:
  void CheckObservation(const domain::JournalState& s, const domain::Event& e);
  void CheckDecision(const domain::JournalState& s, const domain::Event& e);
  void CheckIntentAndOutcome(const domain::JournalState& s, const domain::Event& e);

  std::vector<Divergence> kept_;
  size_t count_ = 0;
  size_t decisions_checked_ = 0;
  size_t events_ = 0;
  int64_t last_seq_ = 0;
};

// What --check found, for the renderers.
struct CheckResult {
  const ReplayChecker* checker = nullptr;  // null: --check not given
  std::string integrity = "not checked";   // PRAGMA integrity_check's answer
};

}  // namespace fk::cli
