#include "kube/client.h"

#include "common/backoff.h"
#include "common/log.h"
#include "domain/dns_names.h"
#include "kube/http_transport.h"
#include "kube/json.h"

#include <algorithm>
#include <boost/json.hpp>
#include <condition_variable>
#include <fstream>
#include <sstream>

namespace fk::kube {
namespace json = boost::json;

namespace {

// Trace: one record per request sent. The path only: a query may carry a
// continue token, and the headers (never logged) carry the bearer token.
void TraceRequest(const std::string& verb, std::string_view target, int code,
                  MonoTime::duration took) {
  if (!log::Enabled(log::Level::kTrace)) return;
  log::Trace("API request")
      .Str("verb", verb)
      .Str("path", target.substr(0, target.find('?')))
      .Int("code", code)
      .Int("duration_ms", std::chrono::duration_cast<std::chrono::milliseconds>(took).count());
}

}  // namespace

std::string ApiHost(std::string_view server) {
  if (const size_t scheme = server.find("://"); scheme != std::string_view::npos)
    server.remove_prefix(scheme + 3);
  return std::string(server.substr(0, server.find('/')));
}

Result<std::unique_ptr<ApiClient>> ApiClient::Create(const ClusterConfig& config,
                                                     ClientOptions options) {
  TransportConfig t;
  t.server = config.server;
  t.ca_pem = config.ca_pem;
  t.insecure_skip_tls_verify = config.insecure_skip_tls_verify;
  t.tls_server_name = config.tls_server_name;
  t.client_cert_pem = config.client_cert_pem;
  t.client_key_pem = config.client_key_pem;
  t.connect_timeout = options.connect_timeout;
  t.request_timeout = options.request_timeout;
  t.stream_idle_timeout = options.stream_idle_timeout;
  t.max_idle_connections = options.max_idle_connections;
  auto transport = HttpTransport::Create(t);
  if (!transport.ok()) {
    return Status::InvalidArgument(config.source + ": " + transport.status().message());
  }
  return CreateWithTransport(config, std::move(options), std::move(*transport));
}

std::unique_ptr<ApiClient> ApiClient::CreateWithTransport(ClusterConfig config,
                                                          ClientOptions options,
                                                          std::unique_ptr<Transport> transport) {
  return std::unique_ptr<ApiClient>(
      new ApiClient(std::move(config), std::move(options), std::move(transport)));
}

ApiClient::ApiClient(ClusterConfig config, ClientOptions options,
                     std::unique_ptr<Transport> transport)
    : config_(std::move(config)),
      options_(std::move(options)),
      transport_(std::move(transport)),
      rng_(options_.jitter_seed ? options_.jitter_seed : std::random_device{}()) {
  if (!options_.time) options_.time = &RealTimeSource::Instance();
  token_ = config_.token;
}

ApiClient::~ApiClient() {
  Stop();
  transport_.reset();
}

void ApiClient::Stop() { stop_.Fire(); }  // its hooks cut every call's request in flight

bool ApiClient::stopping() const { return stop_.fired(); }

bool ApiClient::Wait(std::chrono::milliseconds d, Interrupt& cancel) {
  return options_.time->SleepFor(d, cancel);
}

// Loud once per outage, not once per retry: the first request without an
// HTTP answer is a warning within one request timeout (not after a whole
// call's retries), and the first answer after it says so.
void ApiClient::NoteReachable(bool answered, const std::string& what) {
  bool was;
  {
    std::lock_guard lock(mu_);
    was = unreachable_;
    unreachable_ = !answered;
  }
  if (!answered && !was && !stopping()) {
    log::Warn("API server is not answering; retrying")
        .Str("server", config_.server)
        .Str("config", config_.source)
        .Error(what);
  } else if (answered && was) {
    log::Info("API server answers again").Str("server", config_.server);
  }
}

// A token bucket kept as a theoretical arrival time (GCRA): a request may go
// once tat - (burst - 1) * interval <= now.
bool ApiClient::AcquireRateToken(Interrupt& cancel) {
  if (options_.qps <= 0) return true;
  const auto interval = std::chrono::duration_cast<MonoTime::duration>(
      std::chrono::duration<double>(1.0 / options_.qps));
  MonoTime::duration wait{0};
  {
    std::lock_guard lock(mu_);
    const auto now = options_.time->MonotonicNow();
    if (rate_tat_ < now) rate_tat_ = now;
    const auto allowed_at = rate_tat_ - interval * (std::max(1, options_.burst) - 1);
    if (allowed_at > now) wait = allowed_at - now;
    rate_tat_ += interval;
  }
  if (wait.count() > 0) return Wait(std::chrono::ceil<std::chrono::milliseconds>(wait), cancel);
  return true;
}

std::chrono::milliseconds ApiClient::Backoff(int attempt) {
  std::lock_guard lock(mu_);
  return JitteredDelay(options_.initial_backoff, attempt, options_.max_backoff, rng_);
}

void ApiClient::ReloadToken() {
  if (config_.token_file.empty()) return;
  std::ifstream in(config_.token_file);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string t = ss.str();
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  std::lock_guard lock(mu_);
  if (in && !t.empty()) token_ = t;  // keep the old token if the file is briefly unreadable
  token_read_at_ = options_.time->Now();
}

std::optional<std::string> ApiClient::Token() {
  if (!config_.token_file.empty()) {
    bool stale;
    {
      std::lock_guard lock(mu_);
      stale = token_.empty() || options_.time->Now() - token_read_at_ >= options_.token_refresh;
    }
    if (stale) ReloadToken();
  }
  std::lock_guard lock(mu_);
  if (token_.empty()) return std::nullopt;
  return token_;
}

void ApiClient::Count(const std::string& method, int code, double seconds) {
  {
    std::lock_guard lock(mu_);
    ++counts_[method + " " + std::to_string(code)];
  }
  if (options_.on_request) options_.on_request(method, code, seconds);
}

std::map<std::string, int> ApiClient::RequestCounts() const {
  std::lock_guard lock(mu_);
  return counts_;
}

namespace {

// No HTTP answer: kUnavailable, or kCancelled when the call was abandoned.
Status TransportError(std::string message, bool cancelled = false) {
  ApiError error{ApiErrorKind::kTransport, 0, "", std::move(message), std::nullopt};
  return cancelled ? ApiFailure(std::move(error), Code::kCancelled) : ApiFailure(std::move(error));
}

}  // namespace

ApiResult ApiClient::SendOnce(const HttpRequest& req, std::chrono::milliseconds timeout,
                              Interrupt& abandon) {
  const MonoTime sent = options_.time->MonotonicNow();
  auto res = transport_->RoundTrip(req, timeout, &abandon);
  const auto took = options_.time->MonotonicNow() - sent;
  const double seconds = std::chrono::duration<double>(took).count();
  TraceRequest(req.method, req.target, res.ok() ? res->status : 0, took);
  if (!res.ok()) {
    Count(req.method, 0, seconds);
    NoteReachable(false, res.status().message());
    return TransportError(res.status().message(),
                          res.status().code() == Code::kCancelled || abandon.fired());
  }
  Count(req.method, res->status, seconds);
  NoteReachable(true, "");
  if (res->body_too_large) {  // the same request would be as large again: no retry
    return ApiFailure({ApiErrorKind::kTooLarge, res->status, "",
                       "the answer to " + req.method + " " + req.target + " is over the body limit",
                       std::nullopt});
  }
  if (res->status >= 200 && res->status < 300) return ApiReply{res->status, std::move(res->body)};
  ApiError error = DecodeStatus(res->status, res->body);
  if (!error.retry_after_seconds) error.retry_after_seconds = res->retry_after_seconds;
  return ApiFailure(std::move(error));
}

ApiResult ApiClient::Send(const std::string& method, const std::string& path,
                          const std::string& body, const std::string& content_type,
                          const CallOptions& call) {
  return SendAccepting(method, path, body, content_type, call, "");
}

ApiResult ApiClient::SendAccepting(const std::string& method, const std::string& path,
                                   const std::string& body, const std::string& content_type,
                                   const CallOptions& call, const std::string& accept) {
  const bool retriable = IsIdempotent(method);  // a write is sent once: never resend blindly
  // This call's one interrupt: the client's Stop and the caller's cancel both
  // fire it, and it cuts the request in flight and any wait.
  Interrupt abandon;
  const Interrupt::Hook on_stop = stop_.OnFire([&abandon] { abandon.Fire(); });
  Interrupt::Hook on_cancel;
  if (call.cancel) on_cancel = call.cancel->OnFire([&abandon] { abandon.Fire(); });
  const MonoTime deadline =
      call.deadline.value_or(options_.time->MonotonicNow() + options_.call_timeout);
  const std::string request_line = method + " " + path;
  bool reauthenticated = false;
  ApiResult out = TransportError("deadline passed before " + request_line + " was sent");
  for (int attempt = 0;; ++attempt) {
    if (abandon.fired() || !AcquireRateToken(abandon)) {
      return TransportError(stopping() ? "client is stopping" : request_line + " cancelled",
                            /*cancelled=*/true);
    }
    const auto remaining =
        std::chrono::ceil<std::chrono::milliseconds>(deadline - options_.time->MonotonicNow());
    if (remaining.count() <= 0) return out;  // the last error, or that nothing was sent
    HttpRequest req{method, path, body, content_type, {}};
    if (!accept.empty()) req.headers.emplace_back("Accept", accept);
    if (auto token = Token()) req.headers.emplace_back("Authorization", "Bearer " + *token);
    out = SendOnce(req, std::min(options_.request_timeout, remaining), abandon);
    if (out.ok()) return out;
    const ApiError error = ApiErrorOf(out.status());
    // An answer over the body limit is 2xx: not retried, as any 2xx.
    if (error.code >= 200 && error.code < 300) return out;
    if (error.code == 401 && !config_.token_file.empty() && !reauthenticated) {
      // Refused before it was processed, so even a write may go again: the
      // projected token may have rotated. Re-read it and send at once.
      reauthenticated = true;
      ReloadToken();
      --attempt;
      continue;
    }
    // No HTTP answer (status 0), throttled or a server error: worth retrying,
    // if the method allows it.
    const bool transient = error.code == 0 || error.code == 429 || error.code >= 500;
    if (!retriable || !transient || attempt >= options_.max_retries) return out;
    const auto delay =
        error.retry_after_seconds ? RetryAfterDelay(*error.retry_after_seconds) : Backoff(attempt);
    if (options_.time->MonotonicNow() + delay >= deadline) return out;
    if (!Wait(delay, abandon)) return out;
  }
}

std::unique_ptr<Transport::Stream> ApiClient::OpenStream(const std::string& path,
                                                         Transport::StreamCallbacks callbacks) {
  AcquireRateToken(stop_);
  HttpRequest req{"GET", path, "", "", {}};
  if (auto token = Token()) req.headers.emplace_back("Authorization", "Bearer " + *token);
  Count("WATCH", 200, 0);
  TraceRequest("WATCH", path, 200, MonoTime::duration::zero());  // the stream's start
  return transport_->OpenStream(req, std::move(callbacks));
}

Result<domain::ApiVersion> ApiClient::DiscoverSandboxVersion(const CallOptions& call) {
  ApiResult r = Get("/apis/agents.x-k8s.io", call);
  if (ApiErrorOf(r.status()).kind == ApiErrorKind::kNotFound) {
    return Status::NotFound("the Sandbox API (agents.x-k8s.io) is not served by " + config_.server +
                            "; is agent-sandbox installed?");
  }
  if (!r.ok()) return Status::Unavailable("discovering agents.x-k8s.io: " + r.status().message());
  auto parsed = ParseJson(r->body, "discovery");
  if (!parsed.ok() || !(*parsed)->is_object())
    return Status::Corruption("discovery of agents.x-k8s.io returned something that is not JSON");
  const json::value& v = **parsed;
  bool beta = false, alpha = false;
  if (const auto* versions = v.as_object().if_contains("versions");
      versions && versions->is_array()) {
    for (const auto& e : versions->as_array()) {
      if (!e.is_object()) continue;
      const auto* ver = e.as_object().if_contains("version");
      if (!ver || !ver->is_string()) continue;
      beta |= ver->as_string() == "v1beta1";
      alpha |= ver->as_string() == "v1alpha1";
    }
  }
  if (beta) return domain::ApiVersion::kV1beta1;
  if (alpha) return domain::ApiVersion::kV1alpha1;
  return Status::NotFound("agents.x-k8s.io serves neither v1beta1 nor v1alpha1");
}

Result<std::vector<std::string>> ApiClient::ServedGroups(const CallOptions& call) {
  ApiResult r = Get("/apis", call);
  if (!r.ok()) return Status::Unavailable("discovering API groups: " + r.status().message());
  auto parsed = ParseJson(r->body, "discovery");
  if (!parsed.ok() || !(*parsed)->is_object())
    return Status::Corruption("discovery of /apis returned something that is not a JSON object");
  std::vector<std::string> out;
  if (const auto* groups = (*parsed)->as_object().if_contains("groups");
      groups && groups->is_array()) {
    for (const auto& g : groups->as_array()) {
      const auto* name = g.is_object() ? g.as_object().if_contains("name") : nullptr;
      if (name && name->is_string()) out.emplace_back(name->as_string());
    }
  }
  return out;
}

}  // namespace fk::kube
