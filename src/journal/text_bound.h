// Bounds on the free text the journal stores (notes, details), so that one
// hostile input — a 1 MiB annotation quoted in a note — cannot blow up a row,
// the WAL, or every replay that prints it.
#pragma once

#include <cstddef>
#include <string>

#include "domain/event.h"

namespace fk::journal {

// Free text longer than this is cut (marker included).
inline constexpr size_t kMaxJournalText = 1024;

// `text` if it fits in `max_bytes`; otherwise a prefix cut on a UTF-8
// character boundary followed by a marker saying how many bytes were dropped,
// the whole no longer than `max_bytes`.
std::string BoundText(std::string text, size_t max_bytes = kMaxJournalText);

// Makes every text field of the event valid UTF-8 (invalid bytes become
// U+FFFD) and applies BoundText to the free-text fields of its body.
void BoundEventText(domain::Event& event);

}  // namespace fk::journal
