// The seam between the API client and the wire: one HTTP exchange at a time
// (RoundTrip) and long-lived streaming responses (watches). HttpTransport
// (http_transport.h) implements it with Beast over TCP/TLS; the tests'
// FakeTransport (tests/fake_transport.h, never linked into the binary)
// answers from a function, for unit tests and the deterministic simulation.
// No Beast or Asio here.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/clock.h"
#include "common/status.h"

namespace fk::kube {

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
  // The body was over the transport's limit (TransportConfig.max_body_bytes,
  // FakeTransport::SetMaxBodyBytes): `body` is empty, `status` is the
  // answer's, and the connection is not reused.
  bool body_too_large = false;
};

// Whether sending `method` twice has the effect of sending it once. Only
// these may be re-sent by a transport or retried by the client: a write whose
// answer was lost may have been applied (docs/design.md#lost-answers-and-conflicts).
inline bool IsIdempotent(std::string_view method) { return method == "GET" || method == "HEAD"; }

class Transport {
 public:
  virtual ~Transport() = default;

  // Sends the request once and waits for the whole response, at most
  // `timeout` in all (name resolution, connecting and TLS included). A Status
  // error means no HTTP answer arrived (connect, TLS, timeout, reset,
  // cancelled): kIOError. When `cancel` fires (or has fired) the exchange is
  // abandoned at once, whatever stage it is in — how SIGTERM reaches a call
  // to a server that never answers. Thread-safe.
  virtual Result<HttpResponse> RoundTrip(const HttpRequest& request,
                                         std::chrono::milliseconds timeout, Interrupt* cancel) = 0;
  Result<HttpResponse> RoundTrip(const HttpRequest& request, std::chrono::milliseconds timeout) {
    return RoundTrip(request, timeout, nullptr);
  }

  // A long-lived streaming response (a watch). While the status is 200 each
  // complete line of the body goes to on_line; any other status ends the
  // stream at once with its whole response. on_end runs exactly once; then no
  // more callbacks come. Destroying the Stream cancels it and waits for on_end.
  class Stream {
   public:
    virtual ~Stream() = default;
    // Ends the stream at whatever stage it is in (connecting included); on_end
    // gets an error status.
    virtual void Cancel() = 0;
  };
  struct StreamCallbacks {
    std::function<void(std::string_view line)> on_line;
    // ok + nullopt: the server ended the stream cleanly; ok + response: a
    // non-200 answer; error: transport failure.
    std::function<void(const Status& status, std::optional<HttpResponse> non_ok)> on_end;
    // Whether the consumer keeps up (null: always). While it says no, the
    // transport reads no more of the body, so TCP holds the server back and a
    // slow consumer's backlog stays bounded instead of queueing the whole
    // stream in memory, as client-go's watch reads no faster than its
    // reflector handles events. A server may close a watch held back too
    // long (kube-apiserver's watch cache does); the caller resumes it.
    // Called on the transport's thread; must not block. A transport without
    // flow control (the test doubles) may ignore it.
    std::function<bool()> ready = nullptr;
  };
  virtual std::unique_ptr<Stream> OpenStream(const HttpRequest& request,
                                             StreamCallbacks callbacks) = 0;

  // The API server's host name (for TLS and messages).
  virtual const std::string& host() const = 0;
};

}  // namespace fk::kube
