// JSON encoding of journal event payloads. The payload column of the events
// table holds this text; audit views read it with json_extract(), so field
// names here are part of the on-disk format.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "domain/event.h"
#include "domain/journal_state.h"

namespace fk::journal {

std::string EncodePayload(const domain::EventBody& body);
Result<domain::EventBody> DecodePayload(domain::EventKind kind, std::string_view json);

std::string EncodeSnapshot(const domain::Snapshot& s);
Result<domain::Snapshot> DecodeSnapshot(std::string_view json);

std::string EncodeDecision(const domain::Decision& d);
Result<domain::Decision> DecodeDecision(std::string_view json);

// The event as one JSON object (seq, recorded_at, kind, subject, payload): the
// `replay --format json` representation.
std::string EncodeEvent(const domain::Event& e);

}  // namespace fk::journal
