// What the journal's gauges and totals read at scrape time: file sizes, events
// committed by kind, and the suspend intents still waiting for an outcome
// (the alert on a stuck intent reads the oldest one's age).
#pragma once

#include "common/clock.h"
#include "journal/journal.h"
#include "reconciler/metrics.h"

namespace fk::reconciler {

void ReportJournal(const journal::Journal& journal, Metrics& metrics, WallTime now);

// Seconds since the epoch of an RFC 3339 UTC time as the journal writes it
// ("2026-12-02T00:33:05.123Z"); nullopt if it is not one.
std::optional<double> ParseJournalTime(const std::string& text);

}  // namespace fk::reconciler
