// The simulator's object store: what etcd plus the API server's registry do
// for us, reduced to the rules fencekeeper depends on
// (docs/architecture.md#the-simulator):
//
// - one global resourceVersion counter across all kinds;
// - metadata.generation starts at 1 and is bumped only when something other
//   than metadata (and, for kinds with a status subresource, status) changed;
// - a write that changes nothing is a no-op: no new resourceVersion, no event;
// - optimistic concurrency: a resourceVersion in the written object must match;
// - a bounded history of events, so a watch from an old resourceVersion gets
//   410 Expired.
//
// Objects are stored in their kind's storage version (versions[0]), and a
// kind that is a view of another (core/v1 Events) under that other kind
// (StorageKind): every method takes either and means the stored one. The store
// is thread-safe; watch sinks are called under its lock, in resourceVersion
// order, and must only queue.
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/clock.h"
#include "sim/resources.h"
#include "sim/selector.h"

namespace fk::sim {

struct ApiFailure {
  int code = 500;
  std::string reason;
  std::string message;
  std::string name;  // details.name
  const ResourceKind* kind = nullptr;

  std::string ToJson() const;
};

// An object, or why there is none.
struct Outcome {
  std::optional<ApiFailure> failure;
  boost::json::value object;
  bool changed = false;  // a write that produced a new resourceVersion
  bool ok() const { return !failure; }
};

struct ListOutcome {
  std::vector<boost::json::value> items;
  int64_t resource_version = 0;
};

struct StoredEvent {
  int64_t rv = 0;
  std::string type;  // ADDED, MODIFIED, DELETED
  const ResourceKind* kind = nullptr;
  boost::json::value object;
  boost::json::value previous;  // null for ADDED
};

class Store {
 public:
  // `uid_seed` 0: the UIDs' first group is drawn at random (see NewUid).
  Store(const TimeSource& clock, size_t history_limit = 10000, uint32_t uid_seed = 0);

  // Mutation of an existing object, done atomically under the store's lock on
  // a copy of it. Returning a failure aborts the write.
  using Transform = std::function<std::optional<ApiFailure>(boost::json::value& object)>;

  Outcome Create(const ResourceKind& kind, const std::string& ns, boost::json::value object);
  Outcome Get(const ResourceKind& kind, const std::string& ns, const std::string& name) const;
  ListOutcome List(const ResourceKind& kind, const std::string& ns, const Selector& labels,
                   const Selector& fields) const;
  // PUT semantics: `object` replaces the stored one (status kept unless
  // `status_only`; for `status_only` only status is taken).
  Outcome Update(const ResourceKind& kind, const std::string& ns, const std::string& name,
                 boost::json::value object, bool status_only);
  // PATCH semantics: `transform` edits a copy of the current object; a
  // metadata.resourceVersion it leaves that differs from the stored one is a
  // 409 Conflict.
  Outcome Mutate(const ResourceKind& kind, const std::string& ns, const std::string& name,
                 const Transform& transform, bool status_only);
  Outcome Delete(const ResourceKind& kind, const std::string& ns, const std::string& name,
                 const std::optional<std::string>& precondition_rv,
                 const std::optional<std::string>& precondition_uid);

  using Sink = std::function<void(const StoredEvent&)>;
  struct WatchStart {
    std::optional<ApiFailure> failure;  // 410 Expired for a too-old resourceVersion
    uint64_t id = 0;
  };
  // Registers `sink` for events of `kind` in `ns` ("" = all namespaces). With
  // from_rv unset or 0, first delivers a synthetic ADDED for every current
  // object, then calls `after_initial` (if set) with the resourceVersion they
  // are the state at, before any later event; otherwise every retained event
  // after from_rv.
  WatchStart Watch(const ResourceKind& kind, const std::string& ns, std::optional<int64_t> from_rv,
                   Sink sink, const std::function<void(int64_t)>& after_initial = nullptr);
  void Unwatch(uint64_t id);

  // Called after every write, outside the lock (the agent-sandbox emulation).
  void AddHook(std::function<void(const StoredEvent&)> hook);

  int64_t CurrentResourceVersion() const;
  // Events at or before this resourceVersion are forgotten: a watch or a
  // list continue token from before it gets 410 Expired.
  int64_t CompactedResourceVersion() const;
  // Forgets all history: any watch from a resourceVersion before now gets 410.
  void ExpireHistory();
  size_t WatchCount() const;

 private:
  struct Key {
    const ResourceKind* kind;
    std::string ns, name;
    bool operator<(const Key& o) const;
  };
  struct Watcher {
    const ResourceKind* kind;
    std::string ns;
    Sink sink;
  };

  Outcome Commit(std::unique_lock<std::mutex>& lock, const ResourceKind& kind, const Key& key,
                 boost::json::value next, const boost::json::value* previous, const char* type);
  void Publish(const StoredEvent& e);  // under the lock
  std::string NewUid();
  ApiFailure NotFound(const ResourceKind& kind, const std::string& name) const;

  const TimeSource& clock_;
  const size_t history_limit_;
  mutable std::mutex mu_;
  std::map<Key, boost::json::value> objects_;
  std::vector<StoredEvent> history_;  // oldest first
  int64_t compacted_rv_ = 0;          // events at or before this are forgotten
  // Like an etcd revision, never 0: a list of an empty store must not hand
  // out "0", which a watch would read as "start at the most recent state".
  int64_t rv_ = 1;
  uint64_t next_watch_ = 1;
  uint64_t uid_counter_ = 0;
  uint32_t uid_prefix_;
  std::map<uint64_t, Watcher> watchers_;
  std::vector<std::function<void(const StoredEvent&)>> hooks_;
};

}  // namespace fk::sim
