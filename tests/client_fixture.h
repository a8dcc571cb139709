// The Kubernetes client against the simulator served over real sockets: the
// fixture of the client's, the informers' and the informer cache's tests
// (tests/api_client_test.cc, informer_test.cc, cluster_cache_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/clock.h"
#include "kube/client.h"
#include "kube/config.h"
#include "sim/server.h"
#include "sim/simulator.h"
#include "test_support.h"

namespace fk::testing {

// The sandboxes of namespace "ns", as a string the tests append names to.
inline const std::string kSandboxes = kNsSandboxesPath;

class ClientTest : public ::testing::Test {
 protected:
  void StartServer(sim::ServerOptions options = {}, sim::SimOptions sim_options = {}) {
    sim_ = std::make_unique<sim::Simulator>(sim_options);
    server_ = std::make_unique<sim::Server>(*sim_, options);
    ASSERT_TRUE(server_->Start().ok());
    config_.server = server_->url();
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    sim_.reset();
  }
  kube::ApiClient& Client(kube::ClientOptions options = {}) {
    if (!options.time) options.time = &time_;  // records every wait instead of sleeping
    auto c = kube::ApiClient::Create(config_, options);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(*c);
    return *client_;
  }
  std::string SandboxJson(const std::string& name, const std::string& extra = "") {
    return R"({"apiVersion":"agents.x-k8s.io/v1beta1","kind":"Sandbox","metadata":{"name":")" +
           name + R"(","namespace":"ns")" + extra + R"(},"spec":{"operatingMode":"Running"}})";
  }

  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<sim::Server> server_;
  kube::ClusterConfig config_;
  ManualTimeSource time_;
  std::unique_ptr<kube::ApiClient> client_;
};

}  // namespace fk::testing
