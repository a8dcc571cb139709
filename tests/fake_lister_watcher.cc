#include "fake_lister_watcher.h"

#include <boost/json.hpp>
#include <utility>

#include "kube/api_status.h"

namespace fk::testing {
namespace json = boost::json;

namespace {

// Ends once, on whichever comes first: the script's end, Cancel, destruction.
class ScriptedStream final : public kube::Transport::Stream {
 public:
  explicit ScriptedStream(kube::Transport::StreamCallbacks callbacks)
      : callbacks_(std::move(callbacks)) {}
  ~ScriptedStream() override { Cancel(); }

  void Send(const std::string& line) { callbacks_.on_line(line); }
  void End(const Status& status, std::optional<kube::HttpResponse> non_ok) {
    {
      std::lock_guard lock(mu_);
      if (ended_) return;
      ended_ = true;
    }
    // Outside the lock: on_end takes the informer's inbox lock.
    callbacks_.on_end(status, std::move(non_ok));
  }
  void Cancel() override { End(Status::Cancelled("watch cancelled"), std::nullopt); }

 private:
  kube::Transport::StreamCallbacks callbacks_;
  std::mutex mu_;
  bool ended_ = false;
};

json::object Sandbox(const std::string& name, const std::string& resource_version) {
  return {{"apiVersion", "agents.x-k8s.io/v1beta1"},
          {"kind", "Sandbox"},
          {"metadata",
           {{"name", name},
            {"namespace", "ns"},
            {"uid", name},
            {"resourceVersion", resource_version}}}};
}

std::string Line(const std::string& type, json::object object) {
  return json::serialize(json::object{{"type", type}, {"object", std::move(object)}});
}

}  // namespace

void FakeListerWatcher::AddPage(kube::ApiResult page) {
  std::lock_guard lock(mu_);
  pages_.push_back(std::move(page));
}

void FakeListerWatcher::AddWatch(ScriptedWatch watch) {
  std::lock_guard lock(mu_);
  scripts_.push_back(std::move(watch));
}

kube::ApiResult FakeListerWatcher::List(const kube::ListRequest& request) {
  std::lock_guard lock(mu_);
  lists_.push_back(request);
  if (pages_.empty()) return ErrorAnswer(503, "ServiceUnavailable");
  kube::ApiResult page = std::move(pages_.front());
  pages_.pop_front();
  return page;
}

std::unique_ptr<kube::Transport::Stream> FakeListerWatcher::Watch(
    const kube::WatchRequest& request, kube::Transport::StreamCallbacks callbacks) {
  ScriptedWatch script;
  {
    std::lock_guard lock(mu_);
    watches_.push_back(request);
    last_callbacks_ = callbacks;
    if (!scripts_.empty()) {
      script = std::move(scripts_.front());
      scripts_.pop_front();
    }
  }
  auto stream = std::make_unique<ScriptedStream>(std::move(callbacks));
  for (const std::string& line : script.lines) stream->Send(line);
  if (script.refused) stream->End(Status::Ok(), std::move(script.refused));
  if (script.end) stream->End(*script.end, std::nullopt);
  return stream;
}

std::vector<kube::ListRequest> FakeListerWatcher::lists() const {
  std::lock_guard lock(mu_);
  return lists_;
}

std::vector<kube::WatchRequest> FakeListerWatcher::watches() const {
  std::lock_guard lock(mu_);
  return watches_;
}

kube::Transport::StreamCallbacks FakeListerWatcher::last_watch_callbacks() const {
  std::lock_guard lock(mu_);
  return last_callbacks_;
}

kube::ApiResult ListPageAnswer(const std::vector<std::string>& names,
                               const std::string& resource_version,
                               const std::string& continue_token) {
  json::array items;
  for (const std::string& name : names) items.push_back(Sandbox(name, resource_version));
  json::object metadata{{"resourceVersion", resource_version}};
  if (!continue_token.empty()) metadata["continue"] = continue_token;
  return kube::ApiReply{200, json::serialize(json::object{{"kind", "SandboxList"},
                                                          {"apiVersion", "agents.x-k8s.io/v1beta1"},
                                                          {"metadata", std::move(metadata)},
                                                          {"items", std::move(items)}})};
}

kube::ApiResult ErrorAnswer(int code, const std::string& reason) {
  return kube::ApiFailure(
      kube::DecodeStatus(code, kube::EncodeStatus(code, reason, "scripted " + reason)));
}

std::string EventLine(const std::string& type, const std::string& name,
                      const std::string& resource_version) {
  return Line(type, Sandbox(name, resource_version));
}

std::string BookmarkEventLine(const std::string& resource_version, bool initial_events_end) {
  json::object metadata{{"resourceVersion", resource_version}};
  if (initial_events_end) metadata["annotations"] = {{"k8s.io/initial-events-end", "true"}};
  return Line("BOOKMARK", {{"apiVersion", "agents.x-k8s.io/v1beta1"},
                           {"kind", "Sandbox"},
                           {"metadata", std::move(metadata)}});
}

std::string ErrorEventLine(int code, const std::string& reason) {
  return Line("ERROR",
              json::parse(kube::EncodeStatus(code, reason, "scripted " + reason)).as_object());
}

}  // namespace fk::testing
