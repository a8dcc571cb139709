#include "kube/lister_watcher.h"

namespace fk::kube {
namespace {

constexpr const char* kMetadataOnly =
    "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";

}  // namespace

ApiListerWatcher::ApiListerWatcher(ApiClient& client, const ResourceRef& resource,
                                   const std::string& ns)
    : client_(client), path_(ResourcePath(resource, resource.namespaced ? ns : "")) {}

std::string ApiListerWatcher::ListTarget(const ListRequest& request) const {
  std::string target = path_ + "?limit=" + std::to_string(request.limit);
  if (!request.label_selector.empty())
    target += "&labelSelector=" + QueryEscape(request.label_selector);
  if (!request.continue_token.empty()) target += "&continue=" + QueryEscape(request.continue_token);
  return target;
}

std::string ApiListerWatcher::WatchTarget(const WatchRequest& request) const {
  std::string target = path_ + "?watch=1";
  if (request.allow_bookmarks) target += "&allowWatchBookmarks=true";
  target += "&timeoutSeconds=" + std::to_string(request.timeout_seconds);
  if (request.send_initial_events) {
    // No resourceVersion: a consistent read, never older than what we saw.
    target += "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan";
  } else {
    target += "&resourceVersion=" + QueryEscape(request.resource_version);
  }
  if (!request.label_selector.empty())
    target += "&labelSelector=" + QueryEscape(request.label_selector);
  return target;
}

ApiResult ApiListerWatcher::List(const ListRequest& request) {
  const std::string target = ListTarget(request);
  return request.metadata_only ? client_.GetAs(target, kMetadataOnly) : client_.Get(target);
}

std::unique_ptr<Transport::Stream> ApiListerWatcher::Watch(const WatchRequest& request,
                                                           Transport::StreamCallbacks callbacks) {
  return client_.OpenStream(WatchTarget(request), std::move(callbacks));
}

}  // namespace fk::kube
