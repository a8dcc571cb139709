// The --fault flag of `fencekeeper sim`: VERB:RESOURCE:STATUS[:RETRY_AFTER[:COUNT]].
#pragma once

#include <optional>
#include <string>

#include "sim/simulator.h"

namespace fk::sim {

// Parses one --fault value, e.g. patch:sandboxes:503::2 (twice, no
// Retry-After) or list:*:429:1 (every list, Retry-After: 1); nullopt if
// malformed: an unknown verb, a status outside 100..599, COUNT 0.
std::optional<FaultRule> ParseFaultSpec(const std::string& spec);

}  // namespace fk::sim
