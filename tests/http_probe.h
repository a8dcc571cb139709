// Requests (GETs, mostly) to a local HTTP server (the probe and metrics endpoints), answered
// whatever their code: a 503 from /readyz has a body worth reading, which the
// API client (kube/client.h) turns into an error. One exchange a call, no
// retries: the tests wait on conditions themselves.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <utility>

#include "kube/http_transport.h"

namespace fk::testing {

class HttpProbe {
 public:
  // `server`: "http://127.0.0.1:PORT". Null when the transport cannot be made.
  static std::unique_ptr<HttpProbe> Create(const std::string& server) {
    kube::TransportConfig config;
    config.server = server;
    auto transport = kube::HttpTransport::Create(config);
    if (!transport.ok()) return nullptr;
    return std::unique_ptr<HttpProbe>(new HttpProbe(std::move(*transport)));
  }

  // The answer; status 0 and no body when none came.
  kube::HttpResponse Get(const std::string& target) { return Send("GET", target, ""); }
  kube::HttpResponse Send(const std::string& method, const std::string& target,
                          const std::string& body) {
    kube::HttpRequest request;
    request.method = method;
    request.target = target;
    request.body = body;
    auto answer = transport_->RoundTrip(request, std::chrono::seconds(30));
    return answer.ok() ? std::move(*answer) : kube::HttpResponse{};
  }

 private:
  explicit HttpProbe(std::unique_ptr<kube::HttpTransport> transport)
      : transport_(std::move(transport)) {}
  std::unique_ptr<kube::HttpTransport> transport_;
};

}  // namespace fk::testing
