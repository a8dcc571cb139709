// The journal's base state (table journal_base, schema 7): what the events
// retention removed fold to. The state of a journal is always
// fold(base, retained events) — what `replay`, `replay --check` and `journal
// verify` start from — and equals the projection tables. Only the records
// still alive at the cut are kept: a forgotten sandbox leaves the base as it
// leaves the projections. Included by journal internals only (SQLiteCpp).
#pragma once

#include <SQLiteCpp/Database.h>

#include "common/status.h"
#include "domain/journal_state.h"

namespace fk::journal {

// The base state, last_seq = the last seq removed (an empty state, last_seq
// 0, when nothing was). kCorruption names a record that does not decode.
Result<domain::JournalState> LoadBase(SQLite::Database& db);

// Rewrites the rows of the records that differ between `before` (what the
// table holds) and `after`; throws SQLite::Exception.
void WriteBase(SQLite::Database& db, const domain::JournalState& before,
               const domain::JournalState& after);

}  // namespace fk::journal
