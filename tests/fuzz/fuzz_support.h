// Shared by the libFuzzer targets of this directory (docs/fuzzing.md).
//
// A target states the properties a decoder promises (no crash is implicit:
// ASan and UBSan abort on their own) with FUZZ_CHECK, which aborts so that
// libFuzzer saves the input as a crash, whatever NDEBUG says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#define FUZZ_CHECK(cond)                                                                 \
  do {                                                                                   \
    if (!(cond)) {                                                                       \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                      \
    }                                                                                    \
  } while (0)

namespace fk::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits off the first byte to choose a variant (an API version, an event
// kind, an HTTP status), so one corpus covers every variant of a decoder.
// Returns false for empty input.
inline bool TakeSelector(std::string_view* text, uint8_t* selector) {
  if (text->empty()) return false;
  *selector = static_cast<uint8_t>(text->front());
  text->remove_prefix(1);
  return true;
}

}  // namespace fk::fuzz
