// Process logging: spdlog to stderr, as text or one JSON object per line.
#pragma once

#include <string>

#include "common/status.h"

namespace fk::cli {

// format: "text" or "json"; level: trace, debug, info, warn, error.
Status SetUpLogging(const std::string& format, const std::string& level);

}  // namespace fk::cli
