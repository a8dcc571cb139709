// The simulator as the API server of a client in the same process: a
// FakeTransport whose every request is answered by sim::HandleRequest, as
// sim::Server would answer it over HTTP (watches excepted: only the server
// streams). Fixtures that must see, hold, refuse or change a request pass
// an `around` hook.
#pragma once

#include <boost/json.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "fake_transport.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "sim/simulator.h"

namespace fk::testing {

// The transport's request as the simulator's; the Accept header only when
// asked for (an informer's metadata-only list).
inline sim::ApiRequest ToSim(const kube::HttpRequest& r, bool with_accept = false) {
  sim::ApiRequest out{r.method, r.target, r.body, r.content_type};
  if (with_accept) {
    for (const auto& [k, v] : r.headers)
      if (k == "Accept") out.accept = v;
  }
  return out;
}

// The simulator's reply as an HTTP answer, its Retry-After included.
inline kube::HttpResponse FromSim(const sim::ApiReply& a) {
  return kube::HttpResponse{
      a.status, a.body, a.content_type,
      a.retry_after_seconds > 0 ? std::optional<int>(a.retry_after_seconds) : std::nullopt};
}

// A simulator holding the scenario `yaml`, on `time`, with agent-sandbox's
// own emulation off (the test plays every actor it needs).
inline Result<std::unique_ptr<sim::Simulator>> SimulatorFrom(const std::string& yaml,
                                                             TimeSource& time) {
  sim::SimOptions so;
  so.emulate_agent_sandbox = false;
  auto out = std::make_unique<sim::Simulator>(so, time);
  auto scenario = sim::ParseScenario(yaml, "test");
  if (!scenario.ok()) return scenario.status();
  if (Status s = sim::ApplyScenario(*out, *scenario); !s.ok()) return s;
  return out;
}

// The simulator's answer to `r`. `host` is the server address /api reports.
inline Result<kube::HttpResponse> SimAnswer(sim::Simulator& sim, const kube::HttpRequest& r,
                                            const std::string& host = "sim") {
  return FromSim(sim::HandleRequest(sim, ToSim(r), host));
}

// The simulator's answer to a GET of `path`, parsed (a list, to fill a cache).
inline boost::json::value SimGet(sim::Simulator& sim, const std::string& path) {
  return boost::json::parse(sim::HandleRequest(sim, {"GET", path, "", ""}, "sim").body);
}

// Sees each request first: answers it itself, or passes it on to the
// simulator with `forward()` (and may look at or replace that answer).
using Forward = std::function<Result<kube::HttpResponse>()>;
using AroundRequest =
    std::function<Result<kube::HttpResponse>(const kube::HttpRequest&, const Forward& forward)>;

// A transport into `sim`; `sim` must outlive it.
inline std::unique_ptr<kube::FakeTransport> InProcessTransport(sim::Simulator& sim,
                                                               AroundRequest around = {},
                                                               std::string host = "sim") {
  return std::make_unique<kube::FakeTransport>(
      [&sim, around = std::move(around),
       host = std::move(host)](const kube::HttpRequest& r) -> Result<kube::HttpResponse> {
        const Forward forward = [&] { return SimAnswer(sim, r, host); };
        return around ? around(r, forward) : forward();
      });
}

}  // namespace fk::testing
