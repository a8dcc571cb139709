// Cutting text to a byte budget without splitting a UTF-8 character: a note
// or a message cut mid-character is invalid UTF-8, which the API server
// replaces or rejects and which every reader of the journal must then cope
// with.
#pragma once

#include <cstddef>
#include <string_view>

namespace fk {

// The longest prefix of `text` of at most `max_bytes` that does not end
// inside a UTF-8 sequence. (Bytes that are not UTF-8 are cut like single
// characters.)
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace fk
