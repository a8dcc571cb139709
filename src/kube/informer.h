// An informer for one resource: list, then watch from the list's
// resourceVersion with bookmarks; bookmarks and events advance the
// resourceVersion; a watch that ends is resumed from it; an ERROR 410
// (Expired) or an HTTP 410 leads to a relist; failures back off
// exponentially with jitter, honouring Retry-After. The cache (ObjectStore)
// is kept equal to the server, and subscribers hear every change once.
// A garbage line or an undecodable object is logged with context, counted
// and skipped: it never stops the informer.
//
// Runs on its own thread; subscribers are called on it.
#pragma once

#include <atomic>
#include <boost/json/fwd.hpp>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kube/client.h"

namespace fk::kube {

using ObjectPtr = std::shared_ptr<const boost::json::value>;

struct ResourceRef {
  std::string group;
  std::string version;
  std::string plural;
  bool namespaced = true;
};

class ObjectStore {
 public:
  ObjectPtr Get(const std::string& ns, const std::string& name) const;
  std::vector<ObjectPtr> List(const std::string& ns = "") const;
  size_t size() const;

 private:
  friend class Informer;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, ObjectPtr> objects_;
};

enum class ChangeType { kAdded, kModified, kDeleted };

struct Change {
  ChangeType type;
  std::string ns;
  std::string name;
  std::string resource_version;
  ObjectPtr object;    // the new state (the last state for kDeleted)
  ObjectPtr previous;  // null for kAdded
};

struct InformerOptions {
  std::string ns;  // "" = all namespaces
  std::string label_selector;
  int watch_timeout_seconds = 290;
  std::chrono::milliseconds initial_backoff{800};
  std::chrono::milliseconds max_backoff{30000};
  // Backoff waits go through this (the real clock by default); Stop()
  // interrupts them.
  TimeSource* time = nullptr;
};

struct InformerStats {
  int lists = 0;
  int watches = 0;
  int expired = 0;        // relists caused by 410
  int watch_errors = 0;   // watches that ended with an error
  int decode_errors = 0;  // garbage lines and unusable objects skipped
  std::string resource_version;
};

class Informer {
 public:
  Informer(ApiClient& client, ResourceRef resource, InformerOptions options = {});
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // Register before Start.
  void Subscribe(std::function<void(const Change&)> fn);
  void Start();
  void Stop();

  bool HasSynced() const { return synced_.load(); }
  bool WaitForSync(std::chrono::milliseconds timeout);
  const ObjectStore& store() const { return store_; }
  InformerStats stats() const;
  const ResourceRef& resource() const { return resource_; }

 private:
  enum class WatchEnd { kClean, kExpired, kError };
  void Run();
  bool List();
  WatchEnd Watch(std::optional<std::chrono::milliseconds>* retry_after);
  bool Backoff(int* attempt, std::optional<std::chrono::milliseconds> retry_after);
  void Apply(ChangeType type, ObjectPtr object);
  void Notify(const std::vector<Change>& changes);
  std::string Path() const;

  ApiClient& client_;
  const ResourceRef resource_;
  InformerOptions options_;
  ObjectStore store_;
  std::vector<std::function<void(const Change&)>> subscribers_;
  std::thread thread_;
  std::atomic<bool> synced_{false};
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;
  Interrupt stop_;
  InformerStats stats_;
  std::string rv_;
  std::unique_ptr<Transport::Stream> stream_;
};

}  // namespace fk::kube
