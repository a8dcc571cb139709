// Process logging: spdlog to stderr, as text or one JSON object per line.
// Every message passes through EscapeForLog in the sink, so no call site can
// let a name or an annotation start a new line or send terminal codes.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include "common/status.h"

namespace fk::cli {

// format: "text" or "json"; level: trace, debug, info, warn, error.
// `out` is where lines go (stderr; tests pass a file of their own).
Status SetUpLogging(const std::string& format, const std::string& level, std::FILE* out = stderr);

// One log line's worth of text, printable: C0 controls and DEL as \n, \r,
// \t, \e or \xHH, C1 controls (U+0080-U+009F) as \u0080.., bytes that are
// not valid UTF-8 as \xHH, and the backslash itself as \\ so every escape is
// unambiguous. Valid printable UTF-8 (é, 中) is kept as it is.
std::string EscapeForLog(std::string_view text);

}  // namespace fk::cli
