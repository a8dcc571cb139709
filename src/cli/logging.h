// Process logging: records (common/log.h) to stderr, as logfmt text or one
// JSON object per line, every value escaped (EscapeForLog) and every bearer
// token redacted, so no name or annotation can forge a line or leak a secret.
#pragma once

#include <cstdio>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

#include "common/log.h"
#include "common/status.h"

namespace fk::cli {

// "text" (logfmt) or "json"; nullopt for anything else.
std::optional<log::Format> ParseLogFormat(const std::string& format);

// format: "text" or "json"; level: trace, debug, info, warn, error.
// `out` is where lines go (stderr; tests pass a file of their own).
Status SetUpLogging(const std::string& format, const std::string& level, std::FILE* out = stderr);

// A start-up failure as one record in the chosen format on `err` (the
// process's stderr): level error, msg `what`, the reason in the error field.
void ReportFatal(std::ostream& err, log::Format format, std::string_view what,
                 std::string_view error);

using log::EscapeForLog;

}  // namespace fk::cli
