// Simulator scenario files: ParseScenario (YAML, through YamlToJson for raw
// objects), then ApplyScenario into a fresh simulator on a manual clock. Bad
// files must come back as an error, never as a crash or an endless load.
#include <boost/json/value.hpp>
#include <string>

#include "common/clock.h"
#include "fuzz_support.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(fk::fuzz::AsText(data, size));
  (void)fk::sim::YamlToJson(text);
  auto scenario = fk::sim::ParseScenario(text, "fuzz.yaml");
  if (!scenario.ok()) return 0;
  fk::ManualTimeSource clock;
  fk::sim::Simulator sim(scenario->options, clock);
  (void)fk::sim::ApplyScenario(sim, *scenario);
  return 0;
}
