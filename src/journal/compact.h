// The compact row format of the journal (schema 5, docs/design.md#the-compact-journal).
//
// One stored row of table `journal` holds one event, or — the common case —
// one evaluation: a sandbox's observation, the decision over it and, when the
// decision is to PATCH, the intent, as 2 or 3 events with consecutive seqs
// (the row's seq is the first). Its subject (namespace, name, uid) is spelled
// once, in table `subjects`, together with the sandbox's first observation
// (`base`); an observation row stores only the JSON merge patch (RFC 7396,
// SQLite's json_patch()) that turns the base into it. Enums are integers
// (table journal_names), times integer milliseconds, and fields with their
// default value are left out. The view `events` shows every row as the
// events it holds, in the format of schema 4.
#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "domain/event.h"

namespace fk::journal::compact {

// Column `kind` of table `journal` (mirrored by the rows of journal_kinds).
enum class RowKind : int {
  kFence = 1,
  kObserved = 2,
  kDecided = 3,
  kIntent = 4,
  kOutcome = 5,
  kLeadership = 6,
  kForgotten = 7,
  kEvaluated = 8,        // observation + decision
  kEvaluatedIntent = 9,  // observation + decision + intent
  kPruned = 10,          // retention's record of what it removed (schema 7)
  kWriterStarted = 11,   // a `run` process started appending (schema 11)
};

// How many of `events`, from `at` on, one row holds, and its kind: an
// observation, its decision and its intent of one subject with consecutive
// seqs go together.
size_t GroupAt(const std::vector<domain::Event>& events, size_t at, RowKind* kind);
size_t EventsIn(RowKind kind);

// The compact form of an observation recorded at `at_ms`, as a JSON object.
boost::json::object Compact(const domain::Snapshot& s, int64_t at_ms);
// The merge patch that turns `base` into `target` (neither holds a null).
boost::json::object MergeDiff(const boost::json::object& base, const boost::json::object& target);

// The `body` of a row holding events [first, first + EventsIn(kind)), whose
// subject has observation base `base` (empty: none).
std::string EncodeBody(RowKind kind, const domain::Event* first, const boost::json::object& base,
                       int64_t at_ms);

// The subject and time of a stored row, as decoding needs them.
struct RowContext {
  int64_t seq = 0;
  int64_t at_ms = 0;
  std::string ns, name, uid;
  int64_t ref = 0;
  std::string_view base;  // the subject's base observation ("" = none)
};
// The events a row holds (seq, time and subject set), or kCorruption.
Result<std::vector<domain::Event>> DecodeRow(int kind, std::string_view body,
                                             const RowContext& row);

// RFC 3339 text (as FormatRfc3339 writes it) <-> milliseconds since the epoch.
int64_t ParseRecordedAt(const std::string& rfc3339);
std::string FormatRecordedAt(int64_t ms);

}  // namespace fk::journal::compact
