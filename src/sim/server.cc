// The simulator's HTTP face over fencekeeper's one HTTP server
// (http/server.h): authentication, the injected latency, and a watch as a
// stream of newline-delimited JSON events that ends when it times out, is
// dropped by a fault, or the client goes away. Everything else (discovery,
// control endpoints, faults, the resource verbs) is answered by sim/handler.h's
// Dispatch.
#include "sim/server.h"

#include <deque>
#include <map>
#include <mutex>
#include <variant>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "common/file_io.h"
#include "http/server.h"
#include "sim/handler.h"
#include "sim/store.h"
#include "sim/table.h"
#include "sim/watch_lines.h"

namespace fk::sim {
namespace {

// The lines a watch has to send, filled from the store's and the simulator's
// threads, taken by the server's. Callbacks hold it weakly: a line for a
// watch that has ended goes nowhere.
struct Inbox {
  std::mutex mu;
  std::deque<std::string> lines;
  std::function<void()> wake;

  void Push(std::string line) {
    {
      std::lock_guard lock(mu);
      lines.push_back(std::move(line));
    }
    Wake();
  }
  // Under the lock: ~WatchStream clears `wake` under it too, so no wake is
  // in flight once the stream is gone (the waker only posts; it never takes
  // this lock).
  void Wake() {
    std::lock_guard lock(mu);
    if (wake) wake();
  }
  std::deque<std::string> Take() {
    std::lock_guard lock(mu);
    return std::exchange(lines, {});
  }
};

// One watch (or streaming list) as the server pulls it: the store's events
// and bookmarks as lines until the watch's timeout, a fault that drops it
// (a new watch epoch, or drop_watch_after_events), or the client's leaving.
class WatchStream final : public http::Stream {
 public:
  WatchStream(Simulator& sim, const Route& route, WatchParams params, bool table)
      : sim_(sim),
        route_(route),
        params_(std::move(params)),
        epoch_(sim.watch_epoch()),
        deadline_(std::chrono::steady_clock::now() + std::chrono::seconds(params_.timeout_seconds)),
        next_bookmark_(std::chrono::steady_clock::now() + sim.options().bookmark_interval) {
    const std::weak_ptr<Inbox> weak = inbox_;
    waker_ = sim.AddWatchStream(
        [weak] {
          if (auto in = weak.lock()) in->Wake();
        },
        [weak](std::string raw) {
          if (auto in = weak.lock()) in->Push(std::move(raw));
        });
    Store::WatchStart start = sim.store().Watch(
        *route.kind, route.ns, params_.from_rv,
        [weak, route, ls = params_.labels, fs = params_.fields, table,
         &clock = sim.clock()](const StoredEvent& e) {
          const auto table_at = table ? std::optional(clock.Now()) : std::nullopt;
          std::string line = EventLine(e, route, ls, fs, table_at);
          if (auto in = weak.lock(); in && !line.empty()) in->Push(std::move(line));
        },
        [weak, route, end = params_.initial_events_end](int64_t rv) {
          if (auto in = weak.lock(); in && end) in->Push(InitialEventsEndLine(route, rv));
        });
    // Errors after the resourceVersion parsed travel as one ERROR event.
    if (start.failure)
      failure_line_ = ErrorLine(*start.failure);
    else
      watch_id_ = start.id;
  }

  ~WatchStream() override {
    {
      std::lock_guard lock(inbox_->mu);
      inbox_->wake = nullptr;
    }
    sim_.RemoveWatchStream(waker_);
    if (watch_id_) sim_.store().Unwatch(watch_id_);
  }

  void SetWaker(std::function<void()> wake) override {
    std::lock_guard lock(inbox_->mu);
    inbox_->wake = std::move(wake);
  }

  Pull Next() override {
    Pull pull;
    if (failure_line_) {
      pull.chunks.push_back(std::move(*failure_line_));
      pull.done = true;
      return pull;
    }
    const int64_t bookmark_rv = sim_.store().CurrentResourceVersion();  // read before draining
    for (std::string& line : inbox_->Take()) pull.chunks.push_back(std::move(line));
    sent_ += static_cast<int>(pull.chunks.size());
    const int drop_after = sim_.options().drop_watch_after_events;
    const auto now = std::chrono::steady_clock::now();
    if (sim_.watch_epoch() != epoch_ || (drop_after > 0 && sent_ >= drop_after) ||
        now >= deadline_) {
      pull.done = true;
      return pull;
    }
    if (params_.bookmarks && now >= next_bookmark_) {
      pull.chunks.push_back(BookmarkLine(route_, bookmark_rv));
      next_bookmark_ = now + sim_.options().bookmark_interval;
      pull.next = now;  // and look again at once
      return pull;
    }
    pull.next = params_.bookmarks ? std::min(deadline_, next_bookmark_) : deadline_;
    return pull;
  }

 private:
  Simulator& sim_;
  const Route route_;
  const WatchParams params_;
  const uint64_t epoch_;
  const std::chrono::steady_clock::time_point deadline_;
  std::chrono::steady_clock::time_point next_bookmark_;
  std::shared_ptr<Inbox> inbox_ = std::make_shared<Inbox>();
  uint64_t waker_ = 0;
  uint64_t watch_id_ = 0;
  std::optional<std::string> failure_line_;
  int sent_ = 0;
};

http::Reply ToHttp(const ApiReply& r) {
  return http::Reply{r.status, r.body, r.content_type, r.retry_after_seconds};
}

}  // namespace

struct Server::Impl {
  Impl(Simulator& s, ServerOptions o)
      : sim(s), options(std::move(o)), token(options.bearer_token) {}

  Simulator& sim;
  const ServerOptions options;
  std::unique_ptr<http::Server> http;
  mutable std::mutex mu;
  std::map<std::string, int> auth_counts;
  std::optional<std::string> token;

  // "token", "certificate" or "none" when allowed; "" when not.
  std::string Authenticate(const http::Request& req) {
    std::optional<std::string> want;
    {
      std::lock_guard lock(mu);
      want = token;
    }
    const bool auth_required = want.has_value() || !options.client_ca_pem.empty();
    if (want && req.authorization == "Bearer " + *want) return "token";
    if (req.client_certificate) return "certificate";
    return auth_required ? "" : "none";
  }

  http::Response Handle(const http::Request& req) {
    const std::string auth = Authenticate(req);
    {
      std::lock_guard lock(mu);
      ++auth_counts[auth.empty() ? "rejected" : auth];
    }
    if (auth.empty()) return ToHttp(FailureReply(401, "Unauthorized", "Unauthorized"));
    const ApiRequest request{req.method, req.target, req.body, req.content_type, req.accept};
    auto answer =
        Dispatch(sim, request, options.host + ":" + std::to_string(http ? http->port() : 0));
    if (auto* reply = std::get_if<ApiReply>(&answer)) return ToHttp(*reply);
    const WatchCall& watch = std::get<WatchCall>(answer);
    auto parsed = ParseWatchParams(watch.target, watch.route, sim.options().watch_list);
    if (auto* refused = std::get_if<ApiReply>(&parsed)) return ToHttp(*refused);
    const bool table = WantsTable(req.accept) && HasPrinterColumns(*watch.route.kind);
    return http::Response(std::make_unique<WatchStream>(
        sim, watch.route, std::get<WatchParams>(std::move(parsed)), table));
  }
};

Server::Server(Simulator& sim, ServerOptions options)
    : impl_(std::make_unique<Impl>(sim, std::move(options))) {
  http::ServerOptions o;
  o.host = impl_->options.host;
  o.port = impl_->options.port;
  o.tls_cert_pem = impl_->options.tls_cert_pem;
  o.tls_key_pem = impl_->options.tls_key_pem;
  o.client_ca_pem = impl_->options.client_ca_pem;
  o.server_name = "fencekeeper-sim";
  o.idle_timeout = std::chrono::seconds(300);
  o.latency = [&sim] { return sim.options().latency; };
  impl_->http = std::make_unique<http::Server>(
      std::move(o), [impl = impl_.get()](const http::Request& r) { return impl->Handle(r); });
}

Server::~Server() { Stop(); }

Status Server::Start() {
  Status s = impl_->http->Start();
  if (!s.ok() && s.message().rfind("TLS: ", 0) == 0)
    return Status::InvalidArgument("simulator " + s.message());
  return s;
}

void Server::Stop() { impl_->http->Stop(); }

uint16_t Server::port() const { return impl_->http->port(); }

std::string Server::url() const {
  return std::string(impl_->http->tls() ? "https://" : "http://") + impl_->options.host + ":" +
         std::to_string(port());
}

void Server::SetBearerToken(std::string token) {
  std::lock_guard lock(impl_->mu);
  impl_->token = std::move(token);
}

int Server::AuthCount(const std::string& method) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->auth_counts.find(method);
  return it == impl_->auth_counts.end() ? 0 : it->second;
}

namespace {

// One named entry of a kubeconfig list: {name: NAME, KEY: {fields}}.
void EmitNamed(YAML::Emitter& out, const char* key,
               const std::vector<std::pair<const char*, std::string>>& fields) {
  out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << "fencekeeper-sim";
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
  for (const auto& [field, value] : fields) out << YAML::Key << field << YAML::Value << value;
  out << YAML::EndMap << YAML::EndMap;
}

}  // namespace

Status WriteKubeconfig(const std::string& path, const KubeconfigAccess& access) {
  std::vector<std::pair<const char*, std::string>> cluster = {{"server", access.server_url}};
  if (!access.ca_pem.empty()) {
    const auto* pem = reinterpret_cast<const unsigned char*>(access.ca_pem.data());
    cluster.emplace_back("certificate-authority-data",
                         YAML::EncodeBase64(pem, access.ca_pem.size()));
  }
  std::vector<std::pair<const char*, std::string>> user;
  if (!access.token.empty()) user.emplace_back("token", access.token);
  YAML::Emitter yaml;
  yaml << YAML::BeginMap << YAML::Key << "apiVersion" << YAML::Value << "v1";
  yaml << YAML::Key << "kind" << YAML::Value << "Config";
  yaml << YAML::Key << "clusters" << YAML::Value << YAML::BeginSeq;
  EmitNamed(yaml, "cluster", cluster);
  yaml << YAML::EndSeq << YAML::Key << "users" << YAML::Value << YAML::BeginSeq;
  EmitNamed(yaml, "user", user);
  yaml << YAML::EndSeq << YAML::Key << "contexts" << YAML::Value << YAML::BeginSeq;
  EmitNamed(yaml, "context", {{"cluster", "fencekeeper-sim"}, {"user", "fencekeeper-sim"}});
  yaml << YAML::EndSeq << YAML::Key << "current-context" << YAML::Value << "fencekeeper-sim";
  yaml << YAML::EndMap;
  if (!yaml.good()) return Status::Internal("cannot write kubeconfig: " + yaml.GetLastError());
  // Private: it may hold the token (kubectl creates kubeconfigs 0600 too).
  Status written = WritePrivateFile(path, std::string(yaml.c_str()) + "\n");
  if (!written.ok()) return Status::IOError("kubeconfig: " + written.message());
  return Status::Ok();
}

}  // namespace fk::sim
