// The two requests an informer makes, behind a narrow seam (kube-runtime's
// watcher is stepped over such a list/watch trait): one page of a LIST, and
// a WATCH (or a streaming list, which is a watch). ApiListerWatcher sends
// them through the ApiClient, building the URLs; tests script them with a
// fake (tests/fake_lister_watcher.h), so the informer's state machine runs
// without HTTP.
#pragma once

#include <memory>
#include <string>

#include "kube/client.h"
#include "kube/paths.h"
#include "kube/transport.h"

namespace fk::kube {

// One page of a list.
struct ListRequest {
  std::string continue_token;  // "" for the first page
  int limit = 500;
  // Only the items' metadata (PartialObjectMetadataList): an item too large
  // to read whole can still be named.
  bool metadata_only = false;
  std::string label_selector;  // "" for every object
};

// A watch from `resource_version`, or a streaming list.
struct WatchRequest {
  std::string resource_version;
  int timeout_seconds = 290;
  bool allow_bookmarks = true;
  // A streaming list (KEP-3157): sendInitialEvents=true with
  // resourceVersionMatch=NotOlderThan and no resourceVersion, a consistent
  // read whose initial events end at the k8s.io/initial-events-end bookmark.
  bool send_initial_events = false;
  std::string label_selector;
};

class ListerWatcher {
 public:
  virtual ~ListerWatcher() = default;
  virtual ApiResult List(const ListRequest& request) = 0;
  // As Transport::OpenStream: the lines go to `callbacks`, which end once.
  virtual std::unique_ptr<Transport::Stream> Watch(const WatchRequest& request,
                                                   Transport::StreamCallbacks callbacks) = 0;
};

// One resource in one namespace ("" for all, or a cluster-scoped resource)
// through an ApiClient, which must outlive it.
class ApiListerWatcher final : public ListerWatcher {
 public:
  ApiListerWatcher(ApiClient& client, const ResourceRef& resource, const std::string& ns);
  ApiResult List(const ListRequest& request) override;
  std::unique_ptr<Transport::Stream> Watch(const WatchRequest& request,
                                           Transport::StreamCallbacks callbacks) override;

  // The request targets, path and query.
  std::string ListTarget(const ListRequest& request) const;
  std::string WatchTarget(const WatchRequest& request) const;

 private:
  ApiClient& client_;
  const std::string path_;  // the collection's
};

}  // namespace fk::kube
