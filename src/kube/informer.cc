#include "kube/informer.h"

#include "common/backoff.h"
#include "kube/json_fields.h"

#include <spdlog/spdlog.h>

#include <boost/json.hpp>
#include <deque>
#include <random>

namespace fk::kube {
namespace json = boost::json;

namespace {

std::string Excerpt(std::string_view line) {
  std::string s(line.substr(0, 200));
  if (line.size() > 200) s += "...";
  return s;
}

}  // namespace

ObjectPtr ObjectStore::Get(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = objects_.find({ns, name});
  return it == objects_.end() ? nullptr : it->second;
}

std::vector<ObjectPtr> ObjectStore::List(const std::string& ns) const {
  std::lock_guard lock(mu_);
  std::vector<ObjectPtr> out;
  for (const auto& [key, obj] : objects_) {
    if (ns.empty() || key.first == ns) out.push_back(obj);
  }
  return out;
}

size_t ObjectStore::size() const {
  std::lock_guard lock(mu_);
  return objects_.size();
}

Informer::Informer(ApiClient& client, ResourceRef resource, InformerOptions options)
    : client_(client), resource_(std::move(resource)), options_(std::move(options)) {
  if (!options_.time) options_.time = &RealTimeSource::Instance();
}

Informer::~Informer() { Stop(); }

void Informer::Subscribe(std::function<void(const Change&)> fn) {
  subscribers_.push_back(std::move(fn));
}

void Informer::Start() {
  thread_ = std::thread([this] { Run(); });
}

void Informer::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    if (stream_) stream_->Cancel();
  }
  stop_.Fire();
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

bool Informer::WaitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return synced_.load() || stopping_; }) &&
         synced_.load();
}

InformerStats Informer::stats() const {
  std::lock_guard lock(mu_);
  InformerStats s = stats_;
  s.resource_version = rv_;
  return s;
}

std::string Informer::Path() const {
  return ResourcePath(resource_.group, resource_.version, resource_.plural,
                      resource_.namespaced ? options_.ns : "");
}

void Informer::Notify(const std::vector<Change>& changes) {
  for (const Change& c : changes) {
    for (auto& fn : subscribers_) fn(c);
  }
}

bool Informer::Backoff(int* attempt, std::optional<std::chrono::milliseconds> retry_after) {
  std::chrono::milliseconds d;
  if (retry_after) {
    d = std::min<std::chrono::milliseconds>(*retry_after, kMaxRetryAfter);  // DESIGN §2: capped
  } else {
    static thread_local std::mt19937 rng{std::random_device{}()};
    d = JitteredDelay(options_.initial_backoff, *attempt, options_.max_backoff, rng);
  }
  ++*attempt;
  return options_.time->SleepFor(d, stop_);
}

// Replaces the cache with a fresh list, notifying what changed since.
bool Informer::List() {
  std::string path = Path();
  if (!options_.label_selector.empty())
    path += "?labelSelector=" + QueryEscape(options_.label_selector);
  ApiResponse r = client_.Get(path);
  {
    std::lock_guard lock(mu_);
    ++stats_.lists;
  }
  if (!r.ok()) {
    spdlog::warn("listing {} failed: {}", resource_.plural, r.error.ToString());
    return false;
  }
  boost::system::error_code ec;
  json::value list = json::parse(r.body, ec);
  const json::value* items =
      !ec && list.is_object() ? list.as_object().if_contains("items") : nullptr;
  if (ec || !items || !items->is_array()) {
    spdlog::warn("listing {} returned an unusable body ({}): {}", resource_.plural,
                 ec ? ec.message() : std::string("no items array"), Excerpt(r.body));
    std::lock_guard lock(mu_);
    ++stats_.decode_errors;
    return false;
  }
  std::map<std::pair<std::string, std::string>, ObjectPtr> fresh;
  int skipped = 0;
  for (const json::value& item : items->as_array()) {
    const std::string name = MetadataString(item, "name");
    if (name.empty()) {
      ++skipped;
      continue;
    }
    fresh[{MetadataString(item, "namespace"), name}] = std::make_shared<const json::value>(item);
  }
  std::vector<Change> changes;
  {
    std::lock_guard lock(store_.mu_);
    for (const auto& [key, obj] : fresh) {
      auto it = store_.objects_.find(key);
      if (it == store_.objects_.end()) {
        changes.push_back({ChangeType::kAdded, key.first, key.second,
                           MetadataString(*obj, "resourceVersion"), obj, nullptr});
      } else if (MetadataString(*it->second, "resourceVersion") !=
                 MetadataString(*obj, "resourceVersion")) {
        changes.push_back({ChangeType::kModified, key.first, key.second,
                           MetadataString(*obj, "resourceVersion"), obj, it->second});
      }
    }
    for (const auto& [key, obj] : store_.objects_) {
      if (!fresh.contains(key)) {
        changes.push_back({ChangeType::kDeleted, key.first, key.second,
                           MetadataString(*obj, "resourceVersion"), obj, obj});
      }
    }
    store_.objects_ = std::move(fresh);
  }
  const json::value* meta = list.as_object().if_contains("metadata");
  std::string rv = meta && meta->is_object() ? MetadataString(list, "resourceVersion") : "";
  {
    std::lock_guard lock(mu_);
    rv_ = rv;
    stats_.decode_errors += skipped;
  }
  Notify(changes);
  if (!synced_.exchange(true)) {
    std::lock_guard lock(mu_);
    cv_.notify_all();
  }
  return true;
}

void Informer::Apply(ChangeType type, ObjectPtr object) {
  const std::string ns = MetadataString(*object, "namespace");
  const std::string name = MetadataString(*object, "name");
  Change c{type, ns, name, MetadataString(*object, "resourceVersion"), object, nullptr};
  {
    std::lock_guard lock(store_.mu_);
    auto it = store_.objects_.find({ns, name});
    if (it != store_.objects_.end()) c.previous = it->second;
    if (type == ChangeType::kDeleted) {
      store_.objects_.erase({ns, name});
    } else {
      if (type == ChangeType::kAdded && c.previous) c.type = ChangeType::kModified;
      store_.objects_[{ns, name}] = object;
    }
  }
  Notify({c});
}

Informer::WatchEnd Informer::Watch(std::optional<std::chrono::milliseconds>* retry_after) {
  std::string path = Path() + "?watch=1&allowWatchBookmarks=true&timeoutSeconds=" +
                     std::to_string(options_.watch_timeout_seconds);
  {
    std::lock_guard lock(mu_);
    path += "&resourceVersion=" + QueryEscape(rv_);
    ++stats_.watches;
  }
  if (!options_.label_selector.empty())
    path += "&labelSelector=" + QueryEscape(options_.label_selector);

  struct Inbox {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::string> lines;
    bool ended = false;
    Status status;
    std::optional<HttpResponse> non_ok;
  };
  auto inbox = std::make_shared<Inbox>();
  Transport::StreamCallbacks callbacks;
  callbacks.on_line = [inbox](std::string_view line) {
    std::lock_guard lock(inbox->mu);
    inbox->lines.emplace_back(line);
    inbox->cv.notify_all();
  };
  callbacks.on_end = [inbox](const Status& s, std::optional<HttpResponse> non_ok) {
    std::lock_guard lock(inbox->mu);
    inbox->ended = true;
    inbox->status = s;
    inbox->non_ok = std::move(non_ok);
    inbox->cv.notify_all();
  };
  {
    std::lock_guard lock(mu_);
    if (stopping_) return WatchEnd::kClean;
  }
  auto stream = client_.OpenStream(path, std::move(callbacks));
  {
    std::lock_guard lock(mu_);
    stream_ = std::move(stream);
    if (stopping_) stream_->Cancel();
  }
  WatchEnd end = WatchEnd::kClean;
  for (;;) {
    std::deque<std::string> lines;
    bool ended;
    {
      std::unique_lock lock(inbox->mu);
      inbox->cv.wait(lock, [&] { return !inbox->lines.empty() || inbox->ended; });
      lines.swap(inbox->lines);
      ended = inbox->ended;
    }
    bool stop_reading = false;
    for (const std::string& line : lines) {
      boost::system::error_code ec;
      json::value event = json::parse(line, ec);
      const json::object* e = !ec && event.is_object() ? &event.as_object() : nullptr;
      const json::value* type = e ? e->if_contains("type") : nullptr;
      const json::value* object = e ? e->if_contains("object") : nullptr;
      if (!type || !type->is_string() || !object || !object->is_object()) {
        spdlog::warn("skipping an undecodable line on the {} watch ({}): {}", resource_.plural,
                     ec ? ec.message() : std::string("not a watch event"), Excerpt(line));
        std::lock_guard lock(mu_);
        ++stats_.decode_errors;
        continue;
      }
      const std::string t(type->as_string());
      if (t == "ERROR") {
        const ApiError err = DecodeStatus(200, json::serialize(*object));
        if (err.code == 410) {
          spdlog::info("{} watch expired ({}); relisting", resource_.plural, err.message);
          end = WatchEnd::kExpired;
        } else {
          spdlog::warn("{} watch ended with an error event: {}", resource_.plural, err.ToString());
          end = WatchEnd::kError;
        }
        stop_reading = true;
        break;
      }
      const std::string rv = MetadataString(*object, "resourceVersion");
      if (t == "BOOKMARK") {
        if (!rv.empty()) {
          std::lock_guard lock(mu_);
          rv_ = rv;
        }
        continue;
      }
      if (MetadataString(*object, "name").empty() || rv.empty() ||
          (t != "ADDED" && t != "MODIFIED" && t != "DELETED")) {
        spdlog::warn("skipping an unusable {} watch event: {}", resource_.plural, Excerpt(line));
        std::lock_guard lock(mu_);
        ++stats_.decode_errors;
        continue;
      }
      Apply(t == "DELETED" ? ChangeType::kDeleted
            : t == "ADDED" ? ChangeType::kAdded
                           : ChangeType::kModified,
            std::make_shared<const json::value>(*object));
      std::lock_guard lock(mu_);
      rv_ = rv;
    }
    if (stop_reading) break;
    if (ended) {
      std::lock_guard lock(inbox->mu);
      if (inbox->non_ok) {
        const ApiError err = DecodeStatus(inbox->non_ok->status, inbox->non_ok->body);
        if (err.code == 410) {
          end = WatchEnd::kExpired;
        } else {
          spdlog::warn("{} watch refused: {}", resource_.plural, err.ToString());
          if (inbox->non_ok->retry_after_seconds)
            *retry_after = std::chrono::seconds(*inbox->non_ok->retry_after_seconds);
          end = WatchEnd::kError;
        }
      } else if (!inbox->status.ok()) {
        bool stopping;
        {
          std::lock_guard l(mu_);
          stopping = stopping_;
        }
        if (!stopping)
          spdlog::warn("{} watch failed: {}", resource_.plural, inbox->status.message());
        end = WatchEnd::kError;
      }
      break;
    }
  }
  std::unique_ptr<Transport::Stream> done;
  {
    std::lock_guard lock(mu_);
    done = std::move(stream_);
  }
  done.reset();  // cancels if still open and waits for its end
  return end;
}

void Informer::Run() {
  bool need_list = true;
  int attempt = 0;
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
    }
    if (need_list) {
      if (!List()) {
        if (!Backoff(&attempt, std::nullopt)) return;
        continue;
      }
      need_list = false;
      attempt = 0;
    }
    std::optional<std::chrono::milliseconds> retry_after;
    const WatchEnd end = Watch(&retry_after);
    switch (end) {
      case WatchEnd::kClean:
        attempt = 0;  // a timed-out or dropped watch resumes from the last resourceVersion
        break;
      case WatchEnd::kExpired: {
        std::lock_guard lock(mu_);
        ++stats_.expired;
        need_list = true;
        break;
      }
      case WatchEnd::kError: {
        {
          std::lock_guard lock(mu_);
          ++stats_.watch_errors;
        }
        if (!Backoff(&attempt, retry_after)) return;
        break;
      }
    }
  }
}

}  // namespace fk::kube
