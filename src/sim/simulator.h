// The simulated Kubernetes API (docs/architecture.md#the-simulator) minus
// HTTP: the object store, the agent-sandbox controller emulation, v1alpha1 <-> v1beta1 conversion
// of sandboxes, fault injection, and scenario loading. The HTTP face is sim/server.h; tests drive
// this object directly to change the cluster.
//
// Included by most of the simulator and two dozen tests, so it names the store
// and Boost.JSON without their headers: callers that touch the store or JSON
// include sim/store.h and Boost.JSON themselves.
#pragma once

#include <atomic>
#include <boost/json/fwd.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/status.h"
#include "sim/resources.h"

namespace fk::sim {

class Store;
struct ListOutcome;
struct StoredEvent;

// One fault rule: the next `count` requests matching verb and resource fail
// with `status` (count < 0: every matching request).
struct FaultRule {
  std::string verb = "*";      // get, list, watch, create, update, patch, delete, or *
  std::string resource = "*";  // plural, e.g. sandboxes, or *
  int status = 503;
  int retry_after_seconds = 0;  // > 0 adds a Retry-After header
  bool plain_text = false;      // answer like API priority-and-fairness: text, not a Status
  std::string body;  // non-empty: answer exactly this body (e.g. truncated JSON with 200)
  int count = 1;
};

// The API server's WatchList feature gate: whether a watch may ask for its
// initial events as a streaming list (sendInitialEvents=true).
enum class WatchListGate {
  kOn,   // served: every object as ADDED, then the initial-events-end bookmark (since 1.32)
  kOff,  // refused with 422 Invalid, as a server with the gate off
  // Accepted and ignored: the initial events come, the bookmark never does,
  // as from the test doubles that hang clients waiting for it.
  kSilent,
};

struct SimOptions {
  std::chrono::milliseconds latency{0};               // added before every answer
  std::chrono::milliseconds bookmark_interval{1000};  // for watches with allowWatchBookmarks
  int drop_watch_after_events = 0;  // > 0: close each watch after that many events
  size_t history_limit = 10000;     // retained events; older watches get 410
  // Streaming lists (sendInitialEvents), as the API server's WatchList gate
  // (on by default since Kubernetes 1.32).
  WatchListGate watch_list = WatchListGate::kOn;
  // Seeds the UIDs' first group (0: drawn at random, as a real server's UIDs
  // are). A deterministic simulation fixes it: the order of UIDs decides the
  // order in which a restarted controller re-enqueues what its journal holds.
  uint32_t uid_seed = 0;
  bool emulate_agent_sandbox = true;
  bool serve_sandbox_v1beta1 = true;  // false: an older agent-sandbox serving only v1alpha1
  // For `fencekeeper sim`: periodic faults (0 = never).
  std::chrono::milliseconds drop_watches_every{0};
  std::chrono::milliseconds expire_history_every{0};
  // For `fencekeeper sim`: the time between two steps of an OpenShell flow
  // played on request (sim/flow_requests.h).
  std::chrono::milliseconds openshell_flow_step{300};
};

class Simulator {
 public:
  explicit Simulator(SimOptions options = {}, const TimeSource& clock = RealTimeSource::Instance());
  ~Simulator();  // out of line: the store's type is complete only in simulator.cc
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  Store& store();
  const TimeSource& clock() const { return clock_; }
  const SimOptions& options() const { return options_; }

  // Faults.
  void AddFault(FaultRule rule);
  void ClearFaults();
  std::optional<FaultRule> TakeFault(const std::string& verb, const std::string& resource);
  // Closes every open watch stream now (they end cleanly, as on a timeout).
  void DropWatches();
  // Sends a raw line (garbage, for tests) to every open watch stream.
  void InjectWatchLine(const std::string& line);
  // Open watch streams register here so DropWatches and InjectWatchLine reach them.
  uint64_t AddWatchStream(std::function<void()> wake, std::function<void(std::string)> push_raw);
  void RemoveWatchStream(uint64_t id);
  // Whether `version` of `kind` is served (discovery and routing ask).
  bool Serves(const ResourceKind& kind, const std::string& version) const;
  uint64_t watch_epoch() const { return watch_epoch_.load(); }
  // Forgets the event history: watches resuming from before now get 410.
  void ExpireHistory();

  // Request counters by verb ("get", "list", "watch", "patch", ...), for tests
  // that count API traffic.
  void CountRequest(const std::string& verb, const std::string& resource,
                    const std::string& name = "");
  int RequestCount(const std::string& verb, const std::string& resource = "*",
                   const std::string& name = "*") const;

  // A lagging cache: the next list of `kind` answers these items at this
  // resourceVersion instead of the current state (once). Watches from that
  // resourceVersion then replay what happened since, as a real server does.
  void ServeStaleListOnce(const ResourceKind& kind, ListOutcome stale);
  std::optional<ListOutcome> TakeStaleList(const ResourceKind& kind);
  void ResetCounts();

  // Converts a stored (storage-version) object to the version a client asked
  // for, and a client's object to the storage version; for core/v1 Events,
  // between the core/v1 view and the stored events.k8s.io/v1 form.
  static boost::json::value ToVersion(const ResourceKind& kind, boost::json::value stored,
                                      const std::string& version);
  static boost::json::value FromVersion(const ResourceKind& kind, boost::json::value object,
                                        const std::string& version);

 private:
  void EmulateAgentSandbox(const StoredEvent& e);

  // The store and the stale lists, which hold Boost.JSON values by value:
  // behind a pointer, so this header needs neither sim/store.h nor Boost.JSON's.
  struct Held;

  SimOptions options_;
  const TimeSource& clock_;
  std::unique_ptr<Held> held_;
  std::atomic<uint64_t> watch_epoch_{0};
  mutable std::mutex mu_;
  std::vector<FaultRule> faults_;
  struct RequestRecord {
    std::string verb, resource, name;
  };
  std::vector<RequestRecord> requests_;
  struct WatchStreamHooks {
    std::function<void()> wake;
    std::function<void(std::string)> push_raw;
  };
  std::map<uint64_t, WatchStreamHooks> streams_;
  uint64_t next_waker_ = 1;
};

}  // namespace fk::sim
