// A ListerWatcher (kube/lister_watcher.h) that answers from a script, for
// driving an informer without HTTP: list pages are answered in order, each
// watch sends its scripted lines and ends as scripted (or stays open until
// cancelled), and every request is recorded for the test to assert on.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kube/lister_watcher.h"

namespace fk::testing {

// One watch's script: `lines`, then the end. Neither `end` nor `refused`:
// the stream stays open until it is cancelled.
struct ScriptedWatch {
  std::vector<std::string> lines;
  std::optional<Status> end;                  // ok: the server closed it cleanly
  std::optional<kube::HttpResponse> refused;  // a non-200 answer instead of lines
};

class FakeListerWatcher final : public kube::ListerWatcher {
 public:
  // The next List's answer. An unscripted List answers 503.
  void AddPage(kube::ApiResult page);
  // The next Watch's script. An unscripted Watch stays open.
  void AddWatch(ScriptedWatch watch);

  kube::ApiResult List(const kube::ListRequest& request) override;
  std::unique_ptr<kube::Transport::Stream> Watch(
      const kube::WatchRequest& request, kube::Transport::StreamCallbacks callbacks) override;

  std::vector<kube::ListRequest> lists() const;
  std::vector<kube::WatchRequest> watches() const;
  // The last watch's callbacks, for a test that feeds an open watch itself
  // (and asks whether its consumer is ready); use only while it is open.
  kube::Transport::StreamCallbacks last_watch_callbacks() const;

 private:
  mutable std::mutex mu_;
  std::deque<kube::ApiResult> pages_;
  std::deque<ScriptedWatch> scripts_;
  std::vector<kube::ListRequest> lists_;
  std::vector<kube::WatchRequest> watches_;
  kube::Transport::StreamCallbacks last_callbacks_;
};

// The answers and lines a script is made of. Objects are sandboxes in "ns"
// whose uid is their name.
kube::ApiResult ListPageAnswer(const std::vector<std::string>& names,
                               const std::string& resource_version,
                               const std::string& continue_token = "");
kube::ApiResult ErrorAnswer(int code, const std::string& reason);
std::string EventLine(const std::string& type, const std::string& name,
                      const std::string& resource_version);
// A BOOKMARK; `initial_events_end` marks the end of a streaming list's initial events.
std::string BookmarkEventLine(const std::string& resource_version, bool initial_events_end = false);
// An ERROR event carrying a Status of `code`.
std::string ErrorEventLine(int code, const std::string& reason);

}  // namespace fk::testing
