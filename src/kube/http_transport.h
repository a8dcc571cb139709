// The Transport (transport.h) over HTTP/1.1 to one API server, plain or TLS,
// with keep-alive connection reuse and timeouts. All I/O runs asynchronously
// on one io_context on the transport's own thread; callers block on RoundTrip
// from their threads, and streams deliver their lines on the io thread. Beast
// stays in the .cc.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "kube/transport.h"

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

class HttpTransport final : public Transport {
 public:
  // Fails with a clear message on a malformed server URL or PEM material.
  static Result<std::unique_ptr<HttpTransport>> Create(const TransportConfig& config);
  ~HttpTransport() override;

  // `timeout` bounds the whole exchange (and config.connect_timeout the
  // connect and TLS handshake within it). A request on a reused keep-alive
  // connection that the server closed without answering is sent again on a
  // new connection only if it is idempotent (GET, HEAD); a write gets the
  // error.
  using Transport::RoundTrip;
  Result<HttpResponse> RoundTrip(const HttpRequest& request, std::chrono::milliseconds timeout,
                                 Interrupt* cancel) override;

  // Streams deliver their lines and on_end on the io thread. Connecting and
  // the response header are bounded by request_timeout (connect_timeout
  // within it); then a stream that receives no byte — not even a bookmark —
  // for stream_idle_timeout ends with an error, so its owner resumes it.
  std::unique_ptr<Stream> OpenStream(const HttpRequest& request,
                                     StreamCallbacks callbacks) override;

  const std::string& host() const override;

  struct Impl;  // implementation detail (http_transport.cc)

 private:
  explicit HttpTransport(std::unique_ptr<Impl> impl);
  std::shared_ptr<Impl> impl_;
};

}  // namespace fk::kube
