// Example scenarios compiled into the binary (from tests/scenarios/*.yaml).
#pragma once

#include <string>
#include <vector>

namespace fk::sim {

struct BuiltinScenario {
  std::string name;  // the file name without .yaml, e.g. "incident-3525"
  std::string yaml;
};

const std::vector<BuiltinScenario>& BuiltinScenarios();

}  // namespace fk::sim
