#include "fake_transport.h"

#include <algorithm>

namespace fk::kube {

namespace {

// A stream that has already ended: nothing to cancel.
class EndedStream final : public Transport::Stream {
 public:
  void Cancel() override {}
};

}  // namespace

FakeTransport::FakeTransport(Handler handler, std::string host) : host_(std::move(host)) {
  if (handler) {
    handler_ = [h = std::move(handler)](const HttpRequest& r, std::chrono::milliseconds) {
      return h(r);
    };
  }
}

FakeTransport::FakeTransport(TimedHandler handler, std::string host)
    : handler_(std::move(handler)), host_(std::move(host)) {}

void FakeTransport::Record(const HttpRequest& request, std::chrono::milliseconds timeout,
                           bool stream) {
  std::lock_guard lock(mu_);
  requests_.push_back({request.method, request.target, request.body, request.content_type,
                       request.headers, timeout, stream});
}

Result<HttpResponse> FakeTransport::RoundTrip(const HttpRequest& request,
                                              std::chrono::milliseconds timeout,
                                              Interrupt* cancel) {
  if (cancel && cancel->fired())
    return Status::IOError(request.method + " " + request.target + " cancelled");
  Record(request, timeout, false);
  if (!handler_)
    return Status::IOError("FakeTransport: no handler for " + request.method + " " +
                           request.target);
  Result<HttpResponse> r = handler_(request, timeout);
  uint64_t limit;
  {
    std::lock_guard lock(mu_);
    limit = max_body_bytes_;
  }
  if (r.ok() && limit > 0 && r->body.size() > limit) {
    r->body.clear();
    r->body_too_large = true;
  }
  return r;
}

void FakeTransport::SetMaxBodyBytes(uint64_t bytes) {
  std::lock_guard lock(mu_);
  max_body_bytes_ = bytes;
}

std::unique_ptr<Transport::Stream> FakeTransport::OpenStream(const HttpRequest& request,
                                                             StreamCallbacks callbacks) {
  Record(request, std::chrono::milliseconds(0), true);
  StreamHandler handler;
  {
    std::lock_guard lock(mu_);
    handler = stream_handler_;
  }
  if (handler) return handler(request, std::move(callbacks));
  if (callbacks.on_end) {
    callbacks.on_end(Status::IOError("FakeTransport: no stream handler for " + request.target),
                     std::nullopt);
  }
  return std::make_unique<EndedStream>();
}

void FakeTransport::SetStreamHandler(StreamHandler handler) {
  std::lock_guard lock(mu_);
  stream_handler_ = std::move(handler);
}

std::vector<FakeTransport::Recorded> FakeTransport::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

int FakeTransport::Count(const std::string& method, const std::string& target) const {
  std::lock_guard lock(mu_);
  return static_cast<int>(std::count_if(requests_.begin(), requests_.end(), [&](const Recorded& r) {
    return r.method == method && (target.empty() || r.target == target);
  }));
}

void FakeTransport::ClearRequests() {
  std::lock_guard lock(mu_);
  requests_.clear();
}

}  // namespace fk::kube
