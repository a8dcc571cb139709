// A Transport that answers from a function instead of the network, and
// records every request. Unit tests script answers (and failures) with it;
// the deterministic simulation routes requests to an in-process API server.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "kube/transport.h"

namespace fk::kube {

class FakeTransport final : public Transport {
 public:
  // Answers one round trip: an HttpResponse, or an error Status for "no HTTP
  // answer" (a timeout, a reset). Called on the caller's thread, without any
  // lock held, so it may block, call requests(), or advance a manual clock.
  using Handler = std::function<Result<HttpResponse>(const HttpRequest& request)>;
  // The same, also told the time the caller allowed the round trip (a test
  // that delays a request can time it out as a real transport would).
  using TimedHandler = std::function<Result<HttpResponse>(const HttpRequest& request,
                                                          std::chrono::milliseconds timeout)>;
  // Opens a stream. Without one, every stream ends at once with an error.
  using StreamHandler =
      std::function<std::unique_ptr<Stream>(const HttpRequest& request, StreamCallbacks callbacks)>;

  struct Recorded {
    std::string method;
    std::string target;
    std::string body;
    std::string content_type;
    std::vector<std::pair<std::string, std::string>> headers;
    std::chrono::milliseconds timeout{
        0};               // what the caller allowed this round trip (0 for streams)
    bool stream = false;  // opened with OpenStream
  };

  explicit FakeTransport(Handler handler, std::string host = "fake.invalid");
  explicit FakeTransport(TimedHandler handler, std::string host = "fake.invalid");

  // Recorded before the handler runs: inside the handler, requests().back()
  // is the request being answered. A `cancel` that has fired answers with an
  // error without calling the handler (one already running is not cut short).
  using Transport::RoundTrip;
  Result<HttpResponse> RoundTrip(const HttpRequest& request, std::chrono::milliseconds timeout,
                                 Interrupt* cancel) override;
  std::unique_ptr<Stream> OpenStream(const HttpRequest& request,
                                     StreamCallbacks callbacks) override;
  const std::string& host() const override { return host_; }

  void SetStreamHandler(StreamHandler handler);
  // Answers with a body over `bytes` come back as HttpTransport's do: marked
  // body_too_large, without the body (0: no limit, the default).
  void SetMaxBodyBytes(uint64_t bytes);
  std::vector<Recorded> requests() const;
  // How many recorded requests have this method (and target, unless empty).
  int Count(const std::string& method, const std::string& target = "") const;
  void ClearRequests();

 private:
  void Record(const HttpRequest& request, std::chrono::milliseconds timeout, bool stream);

  TimedHandler handler_;
  std::string host_;
  mutable std::mutex mu_;
  StreamHandler stream_handler_;
  uint64_t max_body_bytes_ = 0;
  std::vector<Recorded> requests_;
};

}  // namespace fk::kube
