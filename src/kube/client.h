// The Kubernetes API client: authentication (static token, token file
// re-read every minute and right after a 401, client certificates through
// the transport), a client-side rate limiter, retries of reads on 429, 5xx
// and transport errors that honour Retry-After (capped at 60 s) and otherwise
// back off with jitter, per-call deadlines, and errors decoded from Status
// objects into typed ApiErrors, carried by the failed call's Status
// (api_result.h). Writes are sent once
// (docs/design.md#lost-answers-and-conflicts). Blocking calls, safe from any
// thread; the wire is a Transport (transport.h): Beast over TCP/TLS, or a fake.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <string_view>

#include "common/backoff.h"
#include "common/clock.h"
#include "common/status.h"
#include "kube/api_result.h"
#include "kube/api_status.h"
#include "kube/config.h"
#include "kube/paths.h"
#include "kube/transport.h"

namespace fk::kube {

struct ClientOptions {
  // Client-side rate limit, off by default (qps 0): the API server's own
  // priority and fairness is the limit, and its 429s and Retry-After are
  // honoured. Set it to be a polite guest on a shared control plane.
  double qps = 0;   // sustained requests per second (0: unlimited)...
  int burst = 100;  // ...and how many may go at once when limited
  int max_retries = 5;
  std::chrono::milliseconds initial_backoff{200};
  std::chrono::milliseconds max_backoff{30000};
  std::chrono::seconds token_refresh{60};
  // Every call is bounded: connecting (TLS included) by connect_timeout, each
  // request by request_timeout, and a call with its retries by call_timeout
  // unless CallOptions gives a deadline. A watch that receives nothing — not
  // even a bookmark, which the API server sends about every minute — for
  // stream_idle_timeout (the watch's own timeoutSeconds plus a margin) is
  // ended as failed and resumed.
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds request_timeout{30000};
  std::chrono::milliseconds call_timeout{120000};
  std::chrono::milliseconds stream_idle_timeout{330000};
  // Kept-alive connections held for reuse: one per thread that sends
  // requests at once (workers, Event senders), or each burst reconnects.
  size_t max_idle_connections = 4;
  // Token refresh timing, the rate limiter and every wait (retry delay, rate
  // limit); the real clock by default. Stop() interrupts the waits.
  TimeSource* time = nullptr;
  uint64_t jitter_seed = 0;  // 0: random
  // Called after every request with its verb and HTTP code (0: no answer), for metrics.
  // Each answer (code 0: none) and the seconds it took (0 for a WATCH: its
  // stream is opened, not answered).
  std::function<void(const std::string& verb, int code, double seconds)> on_request;
};

// The longest Retry-After honoured (common/backoff.h).
using fk::kMaxRetryAfter;

struct CallOptions {
  // On the client's TimeSource's monotonic clock. The remaining time bounds
  // each request's timeout, and no retry wait is started that would end past
  // it (the last error is returned instead). nullopt: now + call_timeout.
  std::optional<MonoTime> deadline;
  // When it fires, the call is abandoned at once, the request in flight
  // included (besides the client's own Stop, which abandons every call).
  Interrupt* cancel = nullptr;
};

class ApiClient {
 public:
  // Over HTTP (HttpTransport) to config.server.
  static Result<std::unique_ptr<ApiClient>> Create(const ClusterConfig& config,
                                                   ClientOptions options = {});
  // Over the given transport; config supplies the token (or token file) and
  // the name in messages. options.{connect,stream_idle}_timeout are the
  // transport's business and unused here.
  static std::unique_ptr<ApiClient> CreateWithTransport(ClusterConfig config, ClientOptions options,
                                                        std::unique_ptr<Transport> transport);
  ~ApiClient();

  // GET (get, list) is retried on 429, 5xx and transport errors, up to
  // max_retries. Any other method is sent once: a write whose answer is an
  // error or lost may have been applied, and only the caller can tell (by
  // reading the object). The one exception, for every method, is a 401 with
  // a token file: the server refused before processing, so the file is
  // re-read and the request sent once more.
  ApiResult Send(const std::string& method, const std::string& path, const std::string& body = "",
                 const std::string& content_type = "", const CallOptions& call = {});
  ApiResult Get(const std::string& path, const CallOptions& call = {}) {
    return Send("GET", path, "", "", call);
  }
  // A GET with an Accept header, e.g. a metadata-only list.
  ApiResult GetAs(const std::string& path, const std::string& accept,
                  const CallOptions& call = {}) {
    return SendAccepting("GET", path, "", "", call, accept);
  }
  ApiResult MergePatch(const std::string& path, const std::string& body,
                       const CallOptions& call = {}) {
    return Send("PATCH", path, body, "application/merge-patch+json", call);
  }

  // Opens a streaming GET (a watch) with the same authentication.
  std::unique_ptr<Transport::Stream> OpenStream(const std::string& path,
                                                Transport::StreamCallbacks callbacks);

  // agents.x-k8s.io: "v1beta1" if served, else "v1alpha1".
  Result<domain::ApiVersion> DiscoverSandboxVersion(const CallOptions& call = {});
  // The API groups the server serves (GET /apis), by name.
  Result<std::vector<std::string>> ServedGroups(const CallOptions& call = {});

  // Abandons every call in progress (its request in flight included: it
  // returns at once with a transport error) and refuses new ones. Final.
  void Stop();
  bool stopping() const;

  // Requests sent, by "VERB CODE" (code 0: no HTTP answer), for metrics and tests.
  std::map<std::string, int> RequestCounts() const;
  const ClusterConfig& config() const { return config_; }
  // Re-reads the token file now (done automatically every token_refresh and after a 401).
  void ReloadToken();

 private:
  ApiClient(ClusterConfig config, ClientOptions options, std::unique_ptr<Transport> transport);
  std::optional<std::string> Token();
  bool Wait(std::chrono::milliseconds d, Interrupt& cancel);
  void NoteReachable(bool answered, const std::string& what);
  bool AcquireRateToken(Interrupt& cancel);
  std::chrono::milliseconds Backoff(int attempt);
  void Count(const std::string& method, int code, double seconds);
  // One round trip, timed, counted and traced; a non-2xx answer decoded into
  // an ApiError, no HTTP answer as a transport error with code 0.
  ApiResult SendAccepting(const std::string& method, const std::string& path,
                          const std::string& body, const std::string& content_type,
                          const CallOptions& call, const std::string& accept);
  ApiResult SendOnce(const HttpRequest& req, std::chrono::milliseconds timeout, Interrupt& abandon);

  ClusterConfig config_;
  ClientOptions options_;
  std::unique_ptr<Transport> transport_;
  mutable std::mutex mu_;
  Interrupt stop_;
  std::string token_;
  WallTime token_read_at_{};
  MonoTime rate_tat_{};
  std::mt19937_64 rng_;
  std::map<std::string, int> counts_;
  bool unreachable_ = false;  // the last request got no HTTP answer (logged once per outage)
};

// The server URL's host[:port], as written ("https://10.96.0.1:443/" gives
// "10.96.0.1:443"): client-go's host label of rest_client_* metrics.
std::string ApiHost(std::string_view server);

}  // namespace fk::kube
