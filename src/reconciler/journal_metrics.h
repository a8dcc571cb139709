// What the journal's gauges and totals read at scrape time: file sizes, events
// committed by kind, and the suspend intents still waiting for an outcome
// (the alert on a stuck intent reads the oldest one's age).
#pragma once

#include <map>
#include <mutex>
#include <string>

#include "common/clock.h"
#include "journal/journal.h"
#include "reconciler/metrics.h"

namespace fk::reconciler {

void ReportJournal(const journal::Journal& journal, Metrics& metrics, WallTime now);

// The sandboxes the journal remembers, by the verdict last recorded for each
// (one never decided counts for none). The journal forgets a sandbox at the
// first pass after it is gone, so this counts the sandboxes that exist.
std::map<std::string, int> VerdictCounts(const journal::Journal& journal);
// Per namespace, the sandboxes whose latest decision is fence-bypassed
// (suspended or held): what another NetworkPolicy has opened.
std::map<std::string, int> BypassedCounts(const journal::Journal& journal);
// Per namespace, the running sandboxes whose latest verdict is a suspension
// that enforcement being off turned into a dry-run intent.
std::map<std::string, int> WouldSuspendCounts(const journal::Journal& journal);
// fencekeeper_sandboxes{verdict}, fencekeeper_sandboxes_would_suspend{namespace} and
// fencekeeper_fence_bypassed_sandboxes{namespace}: reported by the leader only (a standby's
// journal is not what the cluster looks like now).
void ReportVerdicts(const journal::Journal& journal, Metrics& metrics);

// Logs the journal's hash-chain head (docs/journal-chain.md) when it has
// changed since it was last logged and `every` has passed since: ticked at
// least once a minute, a head that changes is logged at least every
// `every` + 1 minute, so that a copy of it lives off the volume (in the logs,
// and in fencekeeper_journal_chain_head, whose labels it sets: a new series
// per logged head, not per append).
class ChainHeadLog {
 public:
  explicit ChainHeadLog(std::chrono::minutes every = std::chrono::minutes(5)) : every_(every) {}
  // True if it logged the head now (and set `metrics`' head series).
  bool Tick(const journal::Journal& journal, MonoTime now, Metrics* metrics = nullptr);

 private:
  const std::chrono::minutes every_;
  std::optional<MonoTime> last_;
  std::string logged_;
};

// Watches the journal's volume (Journal::CheckSpace): says loudly when the
// journal starts shedding non-essential rows and when it stops, and what
// /readyz?verbose and the metrics show. Ticked every minute and at scrapes.
class VolumeWatch {
 public:
  // Checks now; logs a change of state.
  journal::SpaceStatus Tick(journal::Journal& journal);
  // The /readyz?verbose text for the last check ("" when nothing to say).
  std::string Summary() const;

 private:
  mutable std::mutex mu_;
  journal::SpaceStatus last_;
  bool said_shedding_ = false;
};

// Seconds since the epoch of an RFC 3339 UTC time as the journal writes it
// ("2026-12-02T00:33:05.123Z"); nullopt if it is not one.
std::optional<double> ParseJournalTime(const std::string& text);

}  // namespace fk::reconciler
