// An informer for one resource: list (in pages of `page_size`, following
// `continue`; the cache is replaced only once the last page arrived, and a 410
// on a continue token restarts the list; a page over the body limit is asked
// for with half the limit, and a single item over it is skipped and counted), then watch from the
// list's resourceVersion with bookmarks; bookmarks and events advance the resourceVersion; a watch
// that ends is resumed from it; an ERROR 410 (Expired) or an HTTP 410 leads to a relist; failures
// back off exponentially with jitter, honouring Retry-After. The cache (ObjectStore) is kept equal
// to the server — as what the transform keeps of each object — and subscribers hear every change
// once. A garbage line or an undecodable object is logged with whatever identity can be read,
// counted and skipped: it never stops the informer or empties a list
// (docs/design.md#bad-objects-stay-local; decoding is kube/json.h). An informer whose list fails is
// not synced, and says why (sync_state()).
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
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kube/client.h"
#include "kube/json.h"

namespace fk::kube {

struct ResourceRef {
  std::string group;
  std::string version;
  std::string plural;
  bool namespaced = true;
};

// What the informer keeps per object: the transform's compact result (by
// default the whole object, a CachedJson).
class ObjectStore {
 public:
  CachedPtr Get(const std::string& ns, const std::string& name) const;
  std::vector<CachedPtr> List(const std::string& ns = "") const;
  // Every cached (namespace, name) in `ns` ("" = all).
  std::vector<std::pair<std::string, std::string>> Keys(const std::string& ns = "") const;
  size_t size() const;

 private:
  friend class Informer;
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, CachedPtr> objects_;
};

enum class ChangeType { kAdded, kModified, kDeleted };

struct Change {
  ChangeType type;
  std::string ns;
  std::string name;
  std::string resource_version;
  CachedPtr object;    // the new state (the last state for kDeleted)
  CachedPtr previous;  // null for kAdded
};

struct InformerOptions {
  std::string ns;  // "" = all namespaces
  std::string label_selector;
  int watch_timeout_seconds = 290;
  int page_size = 500;  // the list's `limit`, as client-go's pager and kube-rs use
  std::chrono::milliseconds initial_backoff{800};
  std::chrono::milliseconds max_backoff{30000};
  // What is cached of each object (null: the whole object, as CachedJson).
  // Applied to each list item as it is decoded, so a list's peak is its page
  // body and one item's tree, whatever the size of the cluster.
  Transform transform;
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
  int pages = 0;          // list pages fetched
  int list_restarts = 0;  // lists started over after a 410 on a continue token
  std::string resource_version;
};

// Whether the cache can be trusted, and if not, why (for /readyz).
struct SyncState {
  bool synced = false;
  std::string reason;  // empty when synced
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

  // False before the first list completes and whenever a relist fails.
  bool HasSynced() const { return synced_.load(); }
  SyncState sync_state() const;
  // "sandboxes/ns-a" ("sandboxes/*" for all namespaces), for messages.
  std::string Name() const;
  bool WaitForSync(std::chrono::milliseconds timeout);
  const ObjectStore& store() const { return store_; }
  InformerStats stats() const;
  const ResourceRef& resource() const { return resource_; }

 private:
  enum class WatchEnd { kClean, kExpired, kError };
  using Key = std::pair<std::string, std::string>;  // namespace, name
  struct Listing {
    std::map<Key, DecodedObject> objects;
    std::vector<BadObject> bad;
    std::string resource_version;
  };
  void Run();
  bool List();
  Result<Listing> FetchAllPages();
  // One page that fits under the body limit (see informer.cc); *r is the last answer.
  Result<ListPage> FetchPage(const std::string& token, int* limit, ApiResponse* r);
  Result<ListPage> SkipOversizedItem(const std::string& token);
  ApiResponse GetPage(const std::string& token, int limit, const std::string& accept);
  std::string ListPath(const std::string& continue_token, int limit) const;
  void CarryOverUnreadable(Listing* listing) const;
  void ReplaceCache(const Listing& listing);
  void SetSynced(bool synced, std::string reason);
  WatchEnd Watch(std::optional<std::chrono::milliseconds>* retry_after);
  // The watch request's path from the current resourceVersion; counts the watch.
  std::string WatchPath();
  // How a watch that ended with `status` (or refused with `non_ok`) failed,
  // logged; nothing if it ended cleanly. Sets *retry_after when told to wait.
  std::optional<WatchEnd> FailedWatch(const Status& status,
                                      const std::optional<HttpResponse>& non_ok,
                                      std::optional<std::chrono::milliseconds>* retry_after);
  // One watch line; sets *end and returns true when the watch must stop.
  bool HandleLine(const std::string& line, WatchEnd* end);
  void HandleUndecodable(const std::string& type, const BadObject& bad);
  // The event's object, transformed; false when it is dropped or undecodable.
  bool TransformEvent(const std::string& type, DecodedObject* object);
  void ReportBad(std::string_view context, const BadObject& bad);
  bool Backoff(int* attempt, std::optional<std::chrono::milliseconds> retry_after);
  void Apply(ChangeType type, const DecodedObject& object);
  void AdvanceResourceVersion(const std::string& rv);
  bool stopping() const;
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
  std::string sync_reason_ = "the first list has not completed";
  std::set<std::string> reported_bad_;  // bad objects already logged
  std::string rv_;
  std::unique_ptr<Transport::Stream> stream_;
};

}  // namespace fk::kube
