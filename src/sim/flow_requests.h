// OpenShell's create and resume flows on request, for `fencekeeper sim`: an
// operator annotates a sandbox with
//   sim.fencekeeper.dev/openshell-flow=resume   (or =create)
// and the simulator acts the flow out (sim/openshell_flow.h) one step per
// tick, so fencekeeper sees each state a real flow passes through — row 1a,
// admitting, included. The annotation is the simulator's own (no OpenShell
// or Kubernetes component reads sim.fencekeeper.dev); the flow's last step
// removes it. docs/operations.md#rehearse-it-against-the-simulator.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/openshell_flow.h"

namespace fk::sim {

class Simulator;

inline constexpr const char* kFlowRequestAnnotation = "sim.fencekeeper.dev/openshell-flow";
// Set by the simulator when it refuses a request (an unknown flow, a resume of
// a sandbox that is not suspended or behind a missing or edited fence) or
// abandons a flow (its sandbox suspended midway), with the reason;
// the request annotation is removed so a corrected one can be made.
inline constexpr const char* kFlowRefusedAnnotation = "sim.fencekeeper.dev/openshell-flow-refused";

class FlowRequests {
 public:
  // `boundary_ports`: the boundary port OpenShell intends for each namespace's
  // fence (a namespace not listed: the default, 5500); a resume is refused
  // behind a fence that is not the intended one.
  explicit FlowRequests(Simulator& sim, std::map<std::string, int> boundary_ports = {});

  // One tick: every flow in progress takes its next step, then each sandbox
  // newly annotated with a request starts its flow (a create first makes the
  // sandbox what OpenShell POSTs: suspended and bootstrapping). Returns what
  // happened, one "ns/name: step" line each, for logs and tests.
  std::vector<std::string> Tick();
  size_t InProgress() const { return flows_.size(); }

 private:
  std::vector<std::string> TakeRequests();
  void Refuse(const std::string& ns, const std::string& name, const std::string& why);
  std::string Start(const std::string& ns, const std::string& name, const std::string& request,
                    bool was_refused);

  Simulator& sim_;
  const std::map<std::string, int> boundary_ports_;
  std::vector<OpenShellFlow> flows_;
  // Set by a store hook when a sandbox is written with a request: only then
  // does a tick look for new requests (a large fleet is not listed each tick).
  // Shared: the hook outlives this object.
  std::shared_ptr<std::atomic<bool>> maybe_requested_;
};

// Ticks FlowRequests on its own thread every `step` until destroyed (the
// interval between two steps of one flow: long enough that a controller
// watching sees each state).
class FlowTicker {
 public:
  // `report` gets Tick's lines (on the ticker's thread).
  FlowTicker(Simulator& sim, std::map<std::string, int> boundary_ports,
             std::chrono::milliseconds step, std::function<void(const std::string&)> report);
  ~FlowTicker();
  FlowTicker(const FlowTicker&) = delete;
  FlowTicker& operator=(const FlowTicker&) = delete;

 private:
  void Loop(std::chrono::milliseconds step);

  FlowRequests requests_;
  std::function<void(const std::string&)> report_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::thread thread_;  // last: starts once the members it uses exist
};

}  // namespace fk::sim
