// The one way tests start a simulator from a scenario and serve it over
// HTTP, and roll a namespace's fence (sim::RollFence, which the demo uses
// too). Fixtures derive from SimFixture and keep their own helpers.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "sim/scenario.h"
#include "sim/server.h"

namespace fk::testing {

class SimFixture : public ::testing::Test {
 protected:
  // Starts the simulator from `scenario` (parsed YAML text or a file or
  // built-in name, see the helpers below); `adjust` may change its options
  // and faults first. Serves it on 127.0.0.1 at an ephemeral port.
  void StartSimFrom(Result<sim::Scenario> scenario,
                    const std::function<void(sim::Scenario&)>& adjust = {}) {
    ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
    if (adjust) adjust(*scenario);
    server_.reset();  // a second start: the old server serves the old simulator, so it goes first
    sim_ = std::make_unique<sim::Simulator>(scenario->options);
    ASSERT_TRUE(sim::ApplyScenario(*sim_, *scenario).ok());
    server_ = std::make_unique<sim::Server>(*sim_, sim::ServerOptions{});
    ASSERT_TRUE(server_->Start().ok());
  }
  void StartSimFromYaml(const std::string& yaml,
                        const std::function<void(sim::Scenario&)>& adjust = {}) {
    StartSimFrom(sim::ParseScenario(yaml, "test"), adjust);
  }
  void StartSimFromFile(const std::string& file_or_builtin_name,
                        const std::function<void(sim::Scenario&)>& adjust = {}) {
    StartSimFrom(sim::ParseScenarioFile(file_or_builtin_name), adjust);
  }

  // Rolls the fence of `ns` (a spec edit that keeps it intact); returns the
  // fence's new generation.
  int64_t RollFence(const std::string& ns = "openshell-agents") {
    const int64_t generation = sim::RollFence(*sim_, ns);
    EXPECT_GT(generation, 0) << "no fence to roll in namespace " << ns;
    return generation;
  }

  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<sim::Server> server_;
};

}  // namespace fk::testing
