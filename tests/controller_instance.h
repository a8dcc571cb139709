// A controller over a served simulator, as the in-process end-to-end tests
// run one: its own journal connection, a client with a short backoff, and
// resyncs, informer backoffs and retries on short timers so that a test
// converges in milliseconds.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "journal/journal.h"
#include "kube/client.h"
#include "reconciler/sandbox_controller.h"

namespace fk::testing {

struct ControllerInstance {
  std::unique_ptr<journal::Journal> journal;
  std::unique_ptr<kube::ApiClient> client;
  std::unique_ptr<reconciler::SandboxController> controller;
  ~ControllerInstance() {
    if (controller) controller->Stop();
  }
};

// Opens the journal at `path` and starts a controller against the server at
// `url`. Null, with a test failure, when the journal or the client cannot be
// made.
inline std::unique_ptr<ControllerInstance> StartControllerInstance(
    const std::string& url, const std::string& path, const journal::OpenOptions& options = {}) {
  using namespace std::chrono_literals;
  auto in = std::make_unique<ControllerInstance>();
  auto j = journal::Journal::Open(path, options);
  if (!j.ok()) {
    ADD_FAILURE() << j.status().ToString();
    return nullptr;
  }
  in->journal = std::move(*j);
  kube::ClusterConfig cfg;
  cfg.server = url;
  kube::ClientOptions co;
  co.initial_backoff = 20ms;
  auto c = kube::ApiClient::Create(cfg, co);
  if (!c.ok()) {
    ADD_FAILURE() << c.status().ToString();
    return nullptr;
  }
  in->client = std::move(*c);
  reconciler::SandboxControllerOptions o;
  o.resync = 30ms;
  o.informer.initial_backoff = 10ms;
  o.informer.max_backoff = 100ms;
  o.retry_base = 10ms;
  o.retry_max = 200ms;
  in->controller = reconciler::SandboxController::WithInformers(*in->client, *in->journal, o);
  in->controller->Start();
  return in;
}

}  // namespace fk::testing
