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
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kube/client.h"
#include "kube/json.h"
#include "kube/lister_watcher.h"
#include "kube/object_store.h"
#include "kube/watcher_state.h"

namespace fk::kube {

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
  // Seeds the backoff's jitter (0: drawn from std::random_device), so a test
  // can replay an informer's waits exactly.
  uint32_t jitter_seed = 0;
  // List as a streaming list (KEP-3157, client-go's default since 1.35): one
  // watch with sendInitialEvents=true whose ADDED events fill a new cache,
  // swapped in at the k8s.io/initial-events-end bookmark, the same stream
  // then going on as the watch. The server holds one object at a time instead
  // of whole pages. Falls back to the paged list when the stream fails before
  // that bookmark, or sends none within `initial_events_timeout`; a 422 (a
  // server with the WatchList gate off) makes the fallback permanent.
  bool streaming_list = false;
  std::chrono::milliseconds initial_events_timeout{30000};
  // Hands freed heap back (`run` passes fk::ReturnFreedMemory, common/heap.h;
  // null: never, a library does not trim the heap of the process it is in):
  // once a listing is the cache, and during a streaming list after each
  // `trim_every_bytes` of events decoded. Each event's tree is freed between
  // the objects kept, and trimming only at the end let RSS peak up to 8 MB
  // above what the caches then held (docs/performance.md).
  std::function<void()> return_freed_memory;
  size_t trim_every_bytes = size_t{8} << 20;
  // The watch's lines waiting for the informer, at most (plus one read of
  // the socket; the informer takes them all at once and handles them while
  // the next wait): past it the transport stops reading until the informer
  // has taken them (Transport::StreamCallbacks::ready). Unbounded, a starved
  // informer let a streaming list queue up to 1.9 MB of lines, and a peak.
  size_t watch_buffer_bytes = size_t{256} << 10;
};

struct InformerStats {
  int lists = 0;
  int watches = 0;
  int expired = 0;          // relists caused by 410
  int watch_errors = 0;     // watches that ended with an error
  int decode_errors = 0;    // garbage lines and unusable objects skipped
  int pages = 0;            // list pages fetched
  int list_restarts = 0;    // lists started over after a 410 on a continue token
  int streaming_lists = 0;  // streaming lists started
  int list_fallbacks = 0;   // ... that ended before their bookmark: listed by pages instead
  std::string resource_version;
};

// Whether the cache can be trusted, and if not, why (for /readyz).
struct SyncState {
  bool synced = false;
  std::string reason;  // empty when synced
};

class Informer {
 public:
  // Lists and watches `resource` (in options.ns) through `client`.
  Informer(ApiClient& client, const ResourceRef& resource, const InformerOptions& options = {});
  // Lists and watches through `source` (owned, or outliving the informer);
  // `resource` names the informer.
  Informer(std::unique_ptr<ListerWatcher> source, ResourceRef resource,
           InformerOptions options = {});
  Informer(ListerWatcher& source, ResourceRef resource, InformerOptions options = {});
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
  // kNoInitialEvents: a streaming list ended (failed, was refused, timed
  // out) before its initial-events-end bookmark; the cache is as it was.
  enum class WatchEnd { kClean, kExpired, kError, kNoInitialEvents };
  static WatcherEvent EventOf(WatchEnd end);
  struct Listing {
    ObjectMap objects;  // the transformed objects: it becomes the store
    std::vector<BadObject> bad;
    std::string resource_version;
  };
  // What a streaming list has delivered before its initial-events-end bookmark.
  struct InitialEvents {
    Listing listing;
    bool done = false;              // the bookmark came: the cache was replaced
    size_t decoded_since_trim = 0;  // bytes of events since the heap was last trimmed
  };
  void Run();
  // One step of the watcher: the requests its phase calls for, then the
  // transition; false when the informer is stopping.
  bool Cycle(WatcherState* state);
  bool List();
  Result<Listing> FetchAllPages();
  // One page that fits under the body limit (see informer.cc); a failed
  // answer's Status carries its ApiError.
  Result<ListPage> FetchPage(const std::string& token, int* limit);
  Result<ListPage> SkipOversizedItem(const std::string& token);
  ApiResult GetPage(const std::string& token, int limit, bool metadata_only);
  void CarryOverUnreadable(Listing* listing) const;
  void ReplaceCache(Listing* listing);
  void InstallListing(Listing* listing);
  void SetSynced(bool synced, std::string reason);
  // A watch from the current resourceVersion, or (`initial` set) a streaming list.
  WatchEnd Watch(std::optional<std::chrono::milliseconds>* retry_after,
                 InitialEvents* initial = nullptr);
  // The watch request from the current resourceVersion (or, for a
  // streaming list, from none: a consistent read); counts it.
  WatchRequest NextWatch(bool streaming_list);
  // How a streaming list that ended before its bookmark is reported.
  WatchEnd NoInitialEvents(const Status& status, const std::optional<HttpResponse>& non_ok,
                           bool timed_out);
  // One event of a streaming list before its bookmark; true at the bookmark.
  bool HandleInitialEvent(WatchEvent& event, InitialEvents* initial);
  void FinishInitialEvents(InitialEvents* initial, const std::string& resource_version);
  // How a watch that ended with `status` (or refused with `non_ok`) failed,
  // logged; nothing if it ended cleanly. Sets *retry_after when told to wait.
  std::optional<WatchEnd> FailedWatch(const Status& status,
                                      const std::optional<HttpResponse>& non_ok,
                                      std::optional<std::chrono::milliseconds>* retry_after);
  // One watch line; sets *end and returns true when the watch must stop.
  bool HandleLine(const std::string& line, WatchEnd* end, InitialEvents* initial);
  bool HandleLines(const std::deque<std::string>& lines, WatchEnd* end, InitialEvents* initial);
  void HandleUndecodable(const std::string& type, const BadObject& bad);
  // The event's object, transformed; false when it is dropped or undecodable.
  bool TransformEvent(const std::string& type, DecodedObject* object);
  void ReportBad(std::string_view context, const BadObject& bad);
  void TrimHeap() const;  // options_.return_freed_memory, if any
  // Waits before failure `attempt` + 1 (0-based exponent), or as the server
  // asked; false when stopping.
  bool Backoff(int attempt, std::optional<std::chrono::milliseconds> retry_after);
  WatcherEvent ListAll(std::optional<WatchEnd>* streamed,
                       std::optional<std::chrono::milliseconds>* retry_after);
  // Steps `state` on `event` (watcher_state.h), counting it and backing off
  // when told; false when stopping.
  bool Advance(WatcherState* state, WatcherEvent event,
               std::optional<std::chrono::milliseconds> retry_after);
  void Apply(ChangeType type, const DecodedObject& object);
  void AdvanceResourceVersion(const std::string& rv);
  bool stopping() const;
  void Notify(const Change& change);

  std::unique_ptr<ListerWatcher> owned_source_;  // null when the source is the caller's
  ListerWatcher& source_;
  const ResourceRef resource_;
  InformerOptions options_;
  ObjectStore store_;
  StoreWriter writer_{store_, [this](const Change& c) { Notify(c); }};
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
  bool streaming_refused_ = false;  // the server answered a streaming list with 422
  std::mt19937 jitter_;             // the backoff's; used on the informer's thread only
};

}  // namespace fk::kube
