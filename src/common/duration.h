// Go-style durations, as docs/design.md#the-command-line-contract specifies
// for flags: "200ms", "30s", "5m", "1h30m", "1.5s", and days ("90d", which Go
// lacks) for retention. Rounded down to milliseconds.
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

namespace fk {

std::optional<std::chrono::milliseconds> ParseDuration(std::string_view text);

}  // namespace fk
