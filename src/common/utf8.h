// UTF-8 as the journal, the logs and the Events need it. Text from the cluster is made
// valid UTF-8 (each invalid byte becomes U+FFFD, as the API server's own
// decoder does) before anything is decided on it or journaled: what
// fencekeeper writes it must always read back, and SQLite's json_valid()
// accepts invalid UTF-8 that Boost.JSON's parser then refuses.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fk {

// The length of the valid UTF-8 sequence at s[i] (1-4), or 0 if there is none
// (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF,
// a sequence cut off by the end). Sets *code_point for a valid one.
size_t Utf8SequenceLength(std::string_view s, size_t i, unsigned* code_point);

bool IsValidUtf8(std::string_view s);

// `s` with every byte that does not start a valid sequence replaced by U+FFFD.
std::string ValidUtf8(std::string_view s);

// The longest prefix of `text` of at most `max_bytes` that does not end
// inside a UTF-8 sequence, so a note or message cut to a budget stays valid
// UTF-8. (Bytes that are not UTF-8 are cut like single characters.)
std::string_view Utf8Prefix(std::string_view text, size_t max_bytes);

}  // namespace fk
