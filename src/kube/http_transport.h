// HTTP/1.1 to one API server, plain or TLS, with keep-alive connection reuse
// and timeouts. All I/O runs asynchronously on one io_context on the
// transport's own thread; callers block on RoundTrip from their threads, and
// streams deliver their lines on the io thread. Beast stays in the .cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace fk::kube {

struct TransportConfig {
  std::string server;  // http(s)://host[:port][/base]
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string client_cert_pem;
  std::string client_key_pem;
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds request_timeout{30000};
  // A stream with no bytes for this long is treated as dead.
  std::chrono::milliseconds stream_idle_timeout{330000};
  size_t max_idle_connections = 4;
  // A kept-alive connection unused for this long is closed instead of reused.
  std::chrono::milliseconds idle_connection_timeout{90000};
  uint64_t max_body_bytes = 64ull << 20;
};

struct HttpRequest {
  std::string method = "GET";
  std::string target;  // path and query, e.g. /api/v1/namespaces/x/pods?limit=5
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct HttpResponse {
  int status = 0;
  std::string body;
  std::string content_type;
  std::optional<int> retry_after_seconds;
};

class HttpTransport {
 public:
  // Fails with a clear message on a malformed server URL or PEM material.
  static Result<std::unique_ptr<HttpTransport>> Create(const TransportConfig& config);
  ~HttpTransport();

  // Sends the request and waits for the whole response. A Status error means
  // no HTTP answer arrived (connect, TLS, timeout, reset): kIOError.
  Result<HttpResponse> RoundTrip(const HttpRequest& request);

  // A long-lived streaming response (a watch). While the status is 200 each
  // complete line of the body goes to on_line; any other status ends the
  // stream at once with its whole response. on_end runs exactly once, on the
  // io thread; then no more callbacks come.
  class Stream {
   public:
    virtual ~Stream() = default;
    virtual void Cancel() = 0;  // ends the stream; on_end gets a Cancelled-like status
  };
  struct StreamCallbacks {
    std::function<void(std::string_view line)> on_line;
    // ok + nullopt: the server ended the stream cleanly; ok + response: a
    // non-200 answer; error: transport failure.
    std::function<void(const Status& status, std::optional<HttpResponse> non_ok)> on_end;
  };
  std::unique_ptr<Stream> OpenStream(const HttpRequest& request, StreamCallbacks callbacks);

  const std::string& host() const;

  struct Impl;  // implementation detail (http_transport.cc)

 private:
  explicit HttpTransport(std::unique_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace fk::kube
