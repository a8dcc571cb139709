// `fencekeeper status`: every sandbox the journal holds, with what it is now
// (suspended, held, suspending, admitting, healthy, ignored), why, since when,
// the fence change its episode began with, and what resumes it. Read from the
// journal's contract views through a read-only connection, so it runs beside
// a live `run` and in the image (`kubectl exec`), where there is no sqlite3.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fk::cli {

// One sandbox as the journal's views give it.
struct StatusRow {
  std::string ns, sandbox, uid;
  std::string verdict;  // decide()'s: suspend, hold, admitting, healthy, ignore
  std::string reason;   // fence-stale, fence-bypassed, ...
  std::optional<int64_t> observed_generation, applied_generation, pending_intent_seq;
  std::string since;           // when the current episode began (RFC 3339 UTC)
  bool since_exact = true;     // false: retention pruned its start; it began then or before
  int64_t episode_seq = 0;     // the episode's first decision (0: none kept)
  std::string fence;           // the fence change it began with, or the widening policies
  std::string fence_seen;      // when that was observed
  int64_t transition_seq = 0;  // the sandbox's latest suspend intent (0: none)
  std::string outcome;         // its latest outcome: applied, failed, conflict, ... pending
};

// What the sandbox is now, in an operator's words: "suspending" (an intent
// without an outcome, or to be sent again), "refused" (the API server refused
// the suspension: the sandbox still runs), "suspended" (fencekeeper applied
// its suspension in this episode), "held" (suspended by someone else and kept
// so: the fence it was admitted under no longer holds), "admitting",
// "healthy", "ignored" (a spare, or being deleted), "observed" (no decision).
std::string StatusOf(const StatusRow& row);
// The statuses --verdict accepts.
bool IsStatus(const std::string& status);
// What gets the sandbox running again, for `row` in status `status`.
std::string ResumeHint(const StatusRow& row, const std::string& status);

}  // namespace fk::cli
