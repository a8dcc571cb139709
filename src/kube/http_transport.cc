// The client's only Beast translation unit: connections, TLS, keep-alive,
// timeouts and streaming responses, as Asio coroutines on one io thread.
#include "kube/http_transport.h"

#include "common/version.h"
#include "kube/line_splitter.h"
#include "net/any_stream.h"

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cerrno>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include "common/log.h"

#include <sys/socket.h>

namespace fk::kube {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using AnyStream = ::fk::net::AnyStream;

namespace {

constexpr auto kUse = net::use_awaitable;
// How often a paused stream asks again whether its consumer caught up: short
// enough that the consumer, which drains its whole backlog at once, never
// waits long for the next read; the io thread only wakes this often while
// the consumer is behind.
constexpr std::chrono::milliseconds kReaderBehindPoll{1};
using Clock = std::chrono::steady_clock;

// One connection, plain or TLS.
struct Conn {
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> tls;
  beast::flat_buffer buffer;
  bool reused = false;
  std::chrono::steady_clock::time_point idle_since;

  beast::tcp_stream& lowest() { return plain ? *plain : beast::get_lowest_layer(*tls); }
  // Plain or TLS alike, so the exchanges below are compiled once.
  AnyStream stream() { return plain ? AnyStream(*plain) : AnyStream(*tls); }
  // An idle connection is still usable when the server has neither closed it
  // nor sent anything on it (a TLS close_notify counts as something). Checked
  // before reuse, so a write rarely meets a connection the server closed.
  bool StillOpen() {
    if (buffer.size() > 0) return false;
    char c;
    const ssize_t n = ::recv(lowest().socket().native_handle(), &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
  void Close() {
    boost::system::error_code ec;
    lowest().socket().shutdown(tcp::socket::shutdown_both, ec);
    lowest().close();
  }
};

struct Answer {
  Status status;
  HttpResponse response;
};

std::string FieldString(beast::string_view v) { return std::string(v.data(), v.size()); }

// An answer's Retry-After in seconds; nothing if absent or not a number.
template <class Message>
std::optional<int> RetryAfterSeconds(const Message& message) {
  auto it = message.find(http::field::retry_after);
  if (it == message.end()) return std::nullopt;
  try {
    return std::stoi(FieldString(it->value()));
  } catch (...) {
    return std::nullopt;
  }
}

bool IsIpAddress(const std::string& host) {
  boost::system::error_code ec;
  net::ip::make_address(host, ec);
  return !ec;
}

// The parts of the server URL.
struct ServerUrl {
  bool https = false;
  std::string host;
  std::string port;
  std::string base_path;  // without a trailing slash
};

Result<ServerUrl> ParseServer(const std::string& server) {
  ServerUrl u;
  std::string rest;
  if (server.rfind("https://", 0) == 0) {
    u.https = true;
    rest = server.substr(8);
  } else if (server.rfind("http://", 0) == 0) {
    rest = server.substr(7);
  } else {
    return Status::InvalidArgument("server URL '" + server +
                                   "' must start with http:// or https://");
  }
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  if (slash != std::string::npos) u.base_path = rest.substr(slash);
  while (!u.base_path.empty() && u.base_path.back() == '/') u.base_path.pop_back();
  if (!authority.empty() && authority[0] == '[') {  // [v6]:port
    const size_t close = authority.find(']');
    if (close == std::string::npos)
      return Status::InvalidArgument("server URL '" + server + "' has a bad IPv6 address");
    u.host = authority.substr(1, close - 1);
    if (close + 1 < authority.size() && authority[close + 1] == ':')
      u.port = authority.substr(close + 2);
  } else {
    const size_t colon = authority.rfind(':');
    u.host = authority.substr(0, colon);
    if (colon != std::string::npos) u.port = authority.substr(colon + 1);
  }
  if (u.host.empty()) return Status::InvalidArgument("server URL '" + server + "' has no host");
  if (u.port.empty()) u.port = u.https ? "443" : "80";
  return u;
}

std::string Millis(std::chrono::milliseconds d) { return std::to_string(d.count()) + " ms"; }

// What one call or stream has open right now, so that its deadline or its
// cancellation can close it whatever stage it is in (resolving, connecting,
// the TLS handshake, waiting for an answer). io thread only.
struct Abort {
  tcp::resolver* resolver = nullptr;
  Conn* conn = nullptr;
  std::string reason;      // set once fired
  bool by_caller = false;  // fired by the caller's cancel, not by a deadline

  bool aborted() const { return !reason.empty(); }
  void Cancel() {
    if (aborted()) return;
    by_caller = true;
    Fire("cancelled");
  }
  void Fire(std::string why) {
    if (aborted()) return;
    reason = std::move(why);
    if (resolver) resolver->cancel();
    if (conn) conn->Close();
  }
};

// Points `abort` at the connection in use for as long as it is in use, and
// closes one taken while already aborted.
class Watching {
 public:
  Watching(Abort& abort, Conn* conn) : abort_(abort) { Watch(conn); }
  ~Watching() { abort_.conn = nullptr; }
  Watching(const Watching&) = delete;
  Watching& operator=(const Watching&) = delete;
  void Watch(Conn* conn) {
    abort_.conn = conn;
    if (conn && abort_.aborted()) conn->Close();
  }

 private:
  Abort& abort_;
};

struct StreamState;

}  // namespace

struct HttpTransport::Impl : std::enable_shared_from_this<HttpTransport::Impl> {
  TransportConfig config;
  ServerUrl url;
  net::io_context io;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work;
  std::thread thread;
  std::unique_ptr<ssl::context> tls;
  std::vector<std::unique_ptr<Conn>> idle;  // io thread only
  std::mutex streams_mu;
  std::set<std::shared_ptr<StreamState>> streams;

  std::unique_ptr<Conn> NewConn() {
    auto conn = std::make_unique<Conn>();
    if (url.https) {
      conn->tls = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(io.get_executor(), *tls);
    } else {
      conn->plain = std::make_unique<beast::tcp_stream>(io.get_executor());
    }
    return conn;
  }

  // Resolves, connects and (https) handshakes `conn`, within connect_timeout
  // and before `deadline`. `abort` is watching `conn` meanwhile.
  net::awaitable<Status> Connect(Conn& conn, Abort& abort, Clock::time_point deadline) {
    const std::string where = url.host + ":" + url.port;
    if (abort.aborted()) co_return Status::IOError("connecting to " + where + " abandoned");
    tcp::resolver resolver(io.get_executor());
    boost::system::error_code ec;
    abort.resolver = &resolver;
    auto endpoints =
        co_await resolver.async_resolve(url.host, url.port, net::redirect_error(kUse, ec));
    abort.resolver = nullptr;
    if (abort.aborted()) co_return Status::IOError("resolving " + url.host + " abandoned");
    if (ec) co_return Status::IOError("cannot resolve " + url.host + ": " + ec.message());
    conn.lowest().expires_at(std::min(deadline, Clock::now() + config.connect_timeout));
    co_await conn.lowest().async_connect(endpoints, net::redirect_error(kUse, ec));
    if (ec) {
      co_return Status::IOError("cannot connect to " + url.host + ":" + url.port + ": " +
                                ec.message());
    }
    if (conn.tls) {
      const std::string name = config.tls_server_name.empty() ? url.host : config.tls_server_name;
      if (!IsIpAddress(name)) SSL_set_tlsext_host_name(conn.tls->native_handle(), name.c_str());
      if (!config.insecure_skip_tls_verify) {
        conn.tls->set_verify_mode(ssl::verify_peer);
        conn.tls->set_verify_callback(ssl::host_name_verification(name));
      } else {
        conn.tls->set_verify_mode(ssl::verify_none);
      }
      co_await conn.tls->async_handshake(ssl::stream_base::client, net::redirect_error(kUse, ec));
      if (ec) {
        std::string detail = ec.message();
        const long verify = SSL_get_verify_result(conn.tls->native_handle());
        if (verify != X509_V_OK)
          detail += " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
        co_return Status::IOError("TLS handshake with " + url.host + ":" + url.port +
                                  " failed: " + detail);
      }
    }
    conn.lowest().expires_never();
    co_return Status::Ok();
  }

  http::request<http::string_body> BuildRequest(const HttpRequest& req) const {
    http::request<http::string_body> r;
    r.method(http::string_to_verb(req.method));
    r.target(url.base_path + req.target);
    r.version(11);
    const bool default_port = (url.https && url.port == "443") || (!url.https && url.port == "80");
    r.set(http::field::host, default_port ? url.host : url.host + ":" + url.port);
    r.set(http::field::user_agent, fk::UserAgent());
    r.set(http::field::accept, "application/json");
    for (const auto& [k, v] : req.headers) r.set(k, v);
    if (!req.content_type.empty()) r.set(http::field::content_type, req.content_type);
    r.body() = req.body;
    r.keep_alive(true);
    r.prepare_payload();
    return r;
  }

  net::awaitable<void> Exchange(AnyStream stream, Conn& conn,
                                const http::request<http::string_body>& r,
                                Clock::time_point deadline, Answer* answer, bool* keep_alive,
                                bool* nothing_received) {
    boost::system::error_code ec;
    conn.lowest().expires_at(deadline);
    co_await http::async_write(stream, r, net::redirect_error(kUse, ec));
    if (ec) {
      answer->status = Status::IOError("sending " + FieldString(r.method_string()) + " " +
                                       FieldString(r.target()) + " failed: " + ec.message());
      co_return;
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(config.max_body_bytes);
    co_await http::async_read(stream, conn.buffer, parser, net::redirect_error(kUse, ec));
    conn.lowest().expires_never();
    if (ec == http::error::body_limit && parser.is_header_done()) {
      // An answer, but one too large to hold: the caller asks for less.
      answer->response.status = static_cast<int>(parser.get().result_int());
      answer->response.body_too_large = true;
      *keep_alive = false;
      co_return;
    }
    if (ec) {
      *nothing_received = !parser.got_some();
      answer->status = Status::IOError("reading the answer to " + FieldString(r.method_string()) +
                                       " " + FieldString(r.target()) + " failed: " + ec.message());
      co_return;
    }
    auto res = parser.release();
    answer->response.status = static_cast<int>(res.result_int());
    answer->response.content_type = FieldString(res[http::field::content_type]);
    answer->response.retry_after_seconds = RetryAfterSeconds(res);
    answer->response.body = std::move(res.body());
    *keep_alive = res.keep_alive();
  }

  // A kept-alive connection that is still usable, or null.
  std::unique_ptr<Conn> TakeIdle() {
    while (!idle.empty()) {
      auto conn = std::move(idle.back());
      idle.pop_back();
      conn->reused = true;
      if (Clock::now() - conn->idle_since <= config.idle_connection_timeout && conn->StillOpen())
        return conn;
      conn->Close();  // idle too long (the server may have dropped it), or closed by the server
    }
    return nullptr;
  }

  // One exchange, bounded by `timeout` in all and abandoned when `abort` fires.
  net::awaitable<void> Do(HttpRequest req, std::chrono::milliseconds timeout,
                          std::shared_ptr<Abort> abort, Answer* answer) {
    const auto deadline = Clock::now() + timeout;
    auto timer = ArmDeadline(deadline, abort, "timeout: no answer within " + Millis(timeout));
    co_await Attempts(req, deadline, *abort, answer);
    timer->cancel();
    if (!answer->status.ok() && abort->aborted()) {
      std::string why = answer->status.message() + " (" + abort->reason + ")";
      answer->status =
          abort->by_caller ? Status::Cancelled(std::move(why)) : Status::IOError(std::move(why));
    }
  }

  net::awaitable<void> Attempts(const HttpRequest& req, Clock::time_point deadline, Abort& abort,
                                Answer* answer) {
    const auto r = BuildRequest(req);
    for (int attempt = 0; attempt < 2; ++attempt) {
      std::unique_ptr<Conn> conn = TakeIdle();
      Watching watching(abort, conn ? conn.get() : nullptr);
      if (!conn) {
        conn = NewConn();
        watching.Watch(conn.get());
        if (Status status = co_await Connect(*conn, abort, deadline); !status.ok()) {
          answer->status = status;
          co_return;
        }
      }
      bool keep_alive = false, nothing_received = false;
      *answer = Answer{};
      co_await Exchange(conn->stream(), *conn, r, deadline, answer, &keep_alive, &nothing_received);
      watching.Watch(nullptr);
      if (answer->status.ok()) {
        if (keep_alive && idle.size() < config.max_idle_connections) {
          conn->idle_since = Clock::now();
          idle.push_back(std::move(conn));
        } else {
          conn->Close();
        }
        co_return;
      }
      conn->Close();
      // A kept-alive connection the server closed in the meantime: try once
      // more on a new one, but only a read. A write may have reached the
      // server and been applied before it closed; its caller resolves that
      // (docs/design.md#lost-answers-and-conflicts).
      if (!(conn->reused && nothing_received && IsIdempotent(req.method)) ||
          Clock::now() >= deadline || abort.aborted())
        co_return;
    }
  }

  // A timer that fires `abort` at `at` unless cancelled: every stage of a
  // call (name resolution included, which no socket timeout covers) ends by
  // then.
  std::unique_ptr<net::steady_timer> ArmDeadline(Clock::time_point at,
                                                 const std::shared_ptr<Abort>& abort,
                                                 std::string why) {
    auto timer = std::make_unique<net::steady_timer>(io, at);
    timer->async_wait([abort, why = std::move(why)](boost::system::error_code ec) {
      if (!ec) abort->Fire(why);
    });
    return timer;
  }

  net::awaitable<void> RunStream(HttpRequest req, std::shared_ptr<StreamState> state);
  // Sends a stream's request on `stream` and delivers its body to `state`
  // until it ends; a refusal (not 200) ends `state` with the answer. `ec`:
  // how the exchange ended.
  net::awaitable<void> ReadStream(AnyStream stream, Conn& conn,
                                  const http::request<http::string_body>& r,
                                  net::steady_timer& header_timer, StreamState& state,
                                  boost::system::error_code& ec);
  // Returns once the stream's consumer is ready for more (or the stream is
  // cancelled or aborted). Waits on a timer, never blocks: every request and
  // stream shares the io thread.
  net::awaitable<void> WaitForReader(StreamState& state);
  // Cancels the open streams, closes the idle connections and waits (a
  // little) for each stream's on_end: the destructor's first half.
  void CloseAll();
};

namespace {

struct StreamState : HttpTransport::Stream, std::enable_shared_from_this<StreamState> {
  std::weak_ptr<HttpTransport::Impl> transport;
  HttpTransport::StreamCallbacks callbacks;
  std::shared_ptr<Abort> abort = std::make_shared<Abort>();  // io thread only
  std::atomic<bool> cancelled{false};
  std::mutex mu;
  std::condition_variable cv;
  bool ended = false;
  // Set up before the stream runs (Start), used on the io thread only.
  std::optional<LineSplitter> lines;

  void Start(size_t max_line) {
    lines.emplace(max_line, [this, max_line](std::string_view line, bool truncated) {
      if (truncated)
        log::Warn("a watch event too long was cut; it is skipped as undecodable")
            .Int("max_bytes", static_cast<int64_t>(max_line));
      if (!cancelled) callbacks.on_line(line);
    });
  }

  void Cancel() override {
    cancelled = true;
    if (auto t = transport.lock()) {
      net::post(t->io, [self = shared_from_this()] { self->abort->Fire("stream cancelled"); });
    }
  }
  void Deliver(std::string_view data) { lines->Feed(data); }
  void End(const Status& s, std::optional<HttpResponse> non_ok) {
    {
      std::lock_guard lock(mu);
      if (ended) return;
    }
    // Cancelled at whatever stage (connecting, the handshake, reading): the
    // caller asked for it, so it is not a failure of the stream.
    const Status end = cancelled && !s.ok() ? Status::Cancelled("stream cancelled") : s;
    if (callbacks.on_end) callbacks.on_end(end, std::move(non_ok));
    std::lock_guard lock(mu);
    ended = true;
    cv.notify_all();
  }
  void WaitEnded() {
    std::unique_lock lock(mu);
    cv.wait(lock, [this] { return ended; });
  }
};

// The handle the caller owns: cancels on destruction and waits for on_end,
// so callbacks never outlive it.
class StreamHandle final : public HttpTransport::Stream {
 public:
  StreamHandle(std::shared_ptr<StreamState> s, std::thread::id io_thread)
      : state_(std::move(s)), io_thread_(io_thread) {}
  ~StreamHandle() override {
    log::RunNoThrow("closing a watch stream", [this] {
      state_->Cancel();
      if (std::this_thread::get_id() != io_thread_) state_->WaitEnded();
    });
  }
  void Cancel() override { state_->Cancel(); }

 private:
  std::shared_ptr<StreamState> state_;
  std::thread::id io_thread_;
};

}  // namespace

namespace {

// Ends a stream whose connection is closed, saying why.
void EndStream(StreamState& state, const std::string& target, boost::system::error_code ec) {
  if (state.cancelled) {
    state.End(Status::Cancelled("stream cancelled"), std::nullopt);
  } else if (state.abort->aborted()) {
    state.End(Status::IOError("stream " + target + " failed: " + state.abort->reason),
              std::nullopt);
  } else if (ec && ec != http::error::end_of_stream) {
    state.End(Status::IOError("stream " + target + " failed: " + ec.message()), std::nullopt);
  } else {
    state.End(Status::Ok(), std::nullopt);
  }
}

}  // namespace

net::awaitable<void> HttpTransport::Impl::ReadStream(AnyStream stream, Conn& conn,
                                                     const http::request<http::string_body>& r,
                                                     net::steady_timer& header_timer,
                                                     StreamState& state,
                                                     boost::system::error_code& ec) {
  conn.lowest().expires_after(config.request_timeout);
  co_await http::async_write(stream, r, net::redirect_error(kUse, ec));
  if (ec) co_return;
  http::response_parser<http::string_body> parser;
  parser.body_limit(boost::none);  // a watch can run for hours
  co_await http::async_read_header(stream, conn.buffer, parser, net::redirect_error(kUse, ec));
  header_timer.cancel();
  if (ec) co_return;
  if (parser.get().result_int() != 200) {
    parser.body_limit(config.max_body_bytes);
    co_await http::async_read(stream, conn.buffer, parser, net::redirect_error(kUse, ec));
    HttpResponse res;
    res.status = static_cast<int>(parser.get().result_int());
    res.body = parser.get().body();
    res.content_type = FieldString(parser.get()[http::field::content_type]);
    res.retry_after_seconds = RetryAfterSeconds(parser.get());
    ec = {};
    state.End(Status::Ok(), std::move(res));
    co_return;
  }
  auto on_body = [&state](std::uint64_t, beast::string_view body,
                          boost::system::error_code&) -> std::size_t {
    state.Deliver(std::string_view(body.data(), body.size()));
    return body.size();
  };
  parser.on_chunk_body(on_body);
  while (!parser.is_done()) {
    co_await WaitForReader(state);
    // Armed after the pause: a consumer behind is not a silent server.
    conn.lowest().expires_after(config.stream_idle_timeout);
    co_await http::async_read_some(stream, conn.buffer, parser, net::redirect_error(kUse, ec));
    if (ec) co_return;
  }
  if (!parser.get().body().empty()) state.Deliver(parser.get().body());  // a non-chunked body
  state.lines->Finish();
}

net::awaitable<void> HttpTransport::Impl::WaitForReader(StreamState& state) {
  const auto& ready = state.callbacks.ready;
  if (!ready || ready()) co_return;  // the common case: no timer made
  net::steady_timer pause(io);
  while (!ready() && !state.cancelled && !state.abort->aborted()) {
    pause.expires_after(kReaderBehindPoll);
    boost::system::error_code ec;
    co_await pause.async_wait(net::redirect_error(kUse, ec));
  }
}

net::awaitable<void> HttpTransport::Impl::RunStream(HttpRequest req,
                                                    std::shared_ptr<StreamState> state) {
  struct Forget {
    Impl* impl;
    std::shared_ptr<StreamState> state;
    ~Forget() {
      std::lock_guard lock(impl->streams_mu);
      impl->streams.erase(state);
    }
  } forget{this, state};
  // Connecting and the response header within request_timeout; then the
  // body may take hours, but never stays silent for stream_idle_timeout.
  auto timer = ArmDeadline(Clock::now() + config.request_timeout, state->abort,
                           "timeout: no response header within " + Millis(config.request_timeout));
  std::unique_ptr<Conn> conn = NewConn();
  Watching watching(*state->abort, conn.get());
  if (Status status = co_await Connect(*conn, *state->abort, Clock::now() + config.connect_timeout);
      !status.ok()) {
    if (state->abort->aborted())
      status = Status::IOError(status.message() + " (" + state->abort->reason + ")");
    state->End(status, std::nullopt);
    co_return;
  }
  const auto r = BuildRequest(req);
  boost::system::error_code ec;
  co_await ReadStream(conn->stream(), *conn, r, *timer, *state, ec);
  watching.Watch(nullptr);
  timer->cancel();
  conn->Close();
  EndStream(*state, req.target, ec);
}

HttpTransport::HttpTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<HttpTransport>> HttpTransport::Create(const TransportConfig& config) {
  auto url = ParseServer(config.server);
  if (!url.ok()) return url.status();
  auto impl = std::make_unique<Impl>();
  impl->config = config;
  impl->url = *url;
  if (url->https) {
    impl->tls = std::make_unique<ssl::context>(ssl::context::tls_client);
    boost::system::error_code ec;
    impl->tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                           ssl::context::no_sslv3);
    if (!config.ca_pem.empty()) {
      impl->tls->add_certificate_authority(net::buffer(config.ca_pem), ec);
      if (ec)
        return Status::InvalidArgument("certificate authority is not valid PEM: " + ec.message());
    } else {
      impl->tls->set_default_verify_paths(ec);
    }
    if (!config.client_cert_pem.empty()) {
      impl->tls->use_certificate_chain(net::buffer(config.client_cert_pem), ec);
      if (ec)
        return Status::InvalidArgument("client certificate is not valid PEM: " + ec.message());
      impl->tls->use_private_key(net::buffer(config.client_key_pem), ssl::context::pem, ec);
      if (ec)
        return Status::InvalidArgument(
            "client key is not valid PEM or does not match the certificate: " + ec.message());
    }
  }
  impl->work.emplace(net::make_work_guard(impl->io));
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->io.run(); });
  return std::unique_ptr<HttpTransport>(new HttpTransport(std::move(impl)));
}

void HttpTransport::Impl::CloseAll() {
  std::vector<std::shared_ptr<StreamState>> open;
  {
    std::lock_guard lock(streams_mu);
    open.assign(streams.begin(), streams.end());
  }
  for (auto& s : open) s->Cancel();
  work.reset();
  net::post(io, [this] {
    for (auto& c : idle) c->Close();
    idle.clear();
  });
  // Give cancelled streams their on_end before the io thread stops.
  for (auto& s : open) {
    std::unique_lock lock(s->mu);
    s->cv.wait_for(lock, std::chrono::seconds(5), [&] { return s->ended; });
  }
}

HttpTransport::~HttpTransport() {
  // Two steps, so that the io thread is stopped and joined even if closing
  // failed: a std::thread destroyed while joinable ends the process.
  log::RunNoThrow("closing the HTTP transport's streams", [this] { impl_->CloseAll(); });
  log::RunNoThrow("stopping the HTTP transport's io thread", [this] {
    impl_->io.stop();
    if (impl_->thread.joinable()) impl_->thread.join();
  });
}

Result<HttpResponse> HttpTransport::RoundTrip(const HttpRequest& request,
                                              std::chrono::milliseconds timeout,
                                              Interrupt* cancel) {
  std::promise<Answer> done;
  auto future = done.get_future();
  auto answer = std::make_shared<Answer>();
  auto abort = std::make_shared<Abort>();
  Impl* impl = impl_.get();
  // Registered before the exchange starts, so a cancel that comes first is
  // seen by its first stage. Destroyed before we return: it never outlives us.
  Interrupt::Hook hook;
  if (cancel) {
    hook = cancel->OnFire([impl, abort] { net::post(impl->io, [abort] { abort->Cancel(); }); });
  }
  net::co_spawn(impl->io, impl->Do(request, timeout, abort, answer.get()),
                [answer, &done](const std::exception_ptr& e) {
                  if (e) answer->status = Status::Internal("HTTP exchange threw");
                  done.set_value(std::move(*answer));
                });
  Answer a = future.get();
  if (!a.status.ok()) return a.status;
  return std::move(a.response);
}

std::unique_ptr<Transport::Stream> HttpTransport::OpenStream(const HttpRequest& request,
                                                             StreamCallbacks callbacks) {
  auto state = std::make_shared<StreamState>();
  state->transport = impl_;
  state->callbacks = std::move(callbacks);
  state->Start(impl_->config.max_body_bytes);
  {
    std::lock_guard lock(impl_->streams_mu);
    impl_->streams.insert(state);
  }
  net::co_spawn(impl_->io, impl_->RunStream(request, state), [state](const std::exception_ptr& e) {
    if (e) state->End(Status::Internal("stream threw"), std::nullopt);
  });
  return std::make_unique<StreamHandle>(state, impl_->thread.get_id());
}

const std::string& HttpTransport::host() const { return impl_->url.host; }

}  // namespace fk::kube
