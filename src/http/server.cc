#include "http/server.h"

#include <openssl/ssl.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cstdio>
#include <thread>

#include "http/listen.h"
#include "net/any_stream.h"

namespace fk::http {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using BeastRequest = bhttp::request<bhttp::string_body>;
using AnyStream = ::fk::net::AnyStream;

namespace {

constexpr auto kUse = net::use_awaitable;

// What a stream's waker reaches: a timer the pulling coroutine waits on. Held
// by shared_ptr so that a wake from another thread never outlives it. A
// cancel only stops a wait already pending, and a wake can land while the
// coroutine is writing: `woken` (touched on the io thread only) remembers it,
// so the coroutine pulls again instead of sleeping on chunks already there.
struct Wakeup : std::enable_shared_from_this<Wakeup> {
  explicit Wakeup(const net::any_io_executor& ex) : timer(ex) {}
  net::steady_timer timer;
  bool woken = false;
  void Wake() {
    net::post(timer.get_executor(), [self = shared_from_this()] {
      self->woken = true;
      self->timer.cancel();
    });
  }
};

Request FromBeast(const BeastRequest& req, bool client_certificate) {
  Request r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  const size_t mark = r.target.find('?');
  r.path = r.target.substr(0, mark);
  r.query = mark == std::string::npos ? "" : r.target.substr(mark + 1);
  r.body = req.body();
  r.authorization = std::string(req[bhttp::field::authorization]);
  r.content_type = std::string(req[bhttp::field::content_type]);
  r.accept = std::string(req[bhttp::field::accept]);
  r.client_certificate = client_certificate;
  return r;
}

}  // namespace

struct Server::Impl {
  Impl(ServerOptions o, Handler h) : options(std::move(o)), handler(std::move(h)), acceptor(io) {}

  ServerOptions options;
  Handler handler;
  net::io_context io;
  tcp::acceptor acceptor;
  std::unique_ptr<ssl::context> tls;
  std::thread thread;
  uint16_t port = 0;

  net::awaitable<bool> Write(AnyStream& stream, const BeastRequest& req, const Reply& r) {
    bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(r.status), req.version()};
    if (!options.server_name.empty()) res.set(bhttp::field::server, options.server_name);
    res.set(bhttp::field::content_type, r.content_type);
    if (r.retry_after_seconds > 0)
      res.set(bhttp::field::retry_after, std::to_string(r.retry_after_seconds));
    res.keep_alive(req.keep_alive());
    res.body() = r.body;
    res.prepare_payload();
    boost::system::error_code ec;
    co_await bhttp::async_write(stream, res, net::redirect_error(kUse, ec));
    co_return !ec && req.keep_alive();
  }

  // The stream's chunks until it is done or the client goes away.
  net::awaitable<void> WriteStream(AnyStream& stream, const BeastRequest& req, Stream& source) {
    auto wakeup = std::make_shared<Wakeup>(co_await net::this_coro::executor);
    source.SetWaker([wakeup] { wakeup->Wake(); });
    bhttp::response<bhttp::empty_body> res{bhttp::status::ok, req.version()};
    if (!options.server_name.empty()) res.set(bhttp::field::server, options.server_name);
    res.set(bhttp::field::content_type, source.content_type());
    res.chunked(true);
    res.keep_alive(false);
    bhttp::response_serializer<bhttp::empty_body> sr{res};
    boost::system::error_code ec;
    co_await bhttp::async_write_header(stream, sr, net::redirect_error(kUse, ec));
    while (!ec) {
      wakeup->woken = false;  // a wake from here on is a reason to pull again
      Stream::Pull pull = source.Next();
      for (const std::string& chunk : pull.chunks) {
        co_await net::async_write(stream, bhttp::make_chunk(net::buffer(chunk)),
                                  net::redirect_error(kUse, ec));
        if (ec) break;
      }
      if (ec || pull.done) break;
      if (wakeup->woken) continue;
      wakeup->timer.expires_at(pull.next);
      boost::system::error_code woken;
      co_await wakeup->timer.async_wait(net::redirect_error(kUse, woken));
    }
    if (!ec)
      co_await net::async_write(stream, bhttp::make_chunk_last(), net::redirect_error(kUse, ec));
  }

  // Serves one request; returns whether the connection stays open.
  net::awaitable<bool> Serve(AnyStream& stream, const BeastRequest& req, bool client_certificate) {
    if (options.latency) {
      if (const auto delay = options.latency(); delay.count() > 0) {
        net::steady_timer timer(co_await net::this_coro::executor, delay);
        boost::system::error_code ec;
        co_await timer.async_wait(net::redirect_error(kUse, ec));
      }
    }
    Response response = handler(FromBeast(req, client_certificate));
    if (!response.stream) co_return co_await Write(stream, req, response.reply);
    co_await WriteStream(stream, req, *response.stream);
    co_return false;
  }

  // Plain and TLS connections share one Session through AnyStream, which the
  // caller's coroutine owns the stream of.
  net::awaitable<void> Session(AnyStream stream, bool client_certificate) {
    beast::flat_buffer buffer;
    for (;;) {
      bhttp::request_parser<bhttp::string_body> parser;
      parser.body_limit(options.max_body_bytes);
      stream.lowest().expires_after(options.idle_timeout);
      boost::system::error_code ec;
      co_await bhttp::async_read(stream, buffer, parser, net::redirect_error(kUse, ec));
      if (ec) break;
      stream.lowest().expires_never();
      const BeastRequest req = parser.release();
      if (!co_await Serve(stream, req, client_certificate)) break;
    }
    boost::system::error_code ignored;
    stream.lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  net::awaitable<void> SecureSession(tcp::socket socket) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *tls);
    beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
    boost::system::error_code ec;
    co_await stream.async_handshake(ssl::stream_base::server, net::redirect_error(kUse, ec));
    if (ec) co_return;
    bool client_certificate = false;
    if (X509* peer = SSL_get1_peer_certificate(stream.native_handle())) {
      client_certificate = SSL_get_verify_result(stream.native_handle()) == X509_V_OK;
      X509_free(peer);
    }
    co_await Session(AnyStream(stream), client_certificate);
  }

  net::awaitable<void> PlainSession(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    co_await Session(AnyStream(stream), false);
  }

  net::awaitable<void> Accept() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(net::redirect_error(kUse, ec));
      if (ec) co_return;
      if (tls) {
        net::co_spawn(io, SecureSession(std::move(socket)), net::detached);
      } else {
        net::co_spawn(io, PlainSession(std::move(socket)), net::detached);
      }
    }
  }

  Status MakeTls() {
    if (options.tls_cert_pem.empty()) return Status::Ok();
    try {
      tls = std::make_unique<ssl::context>(ssl::context::tls_server);
      tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3);
      tls->use_certificate_chain(net::buffer(options.tls_cert_pem));
      tls->use_private_key(net::buffer(options.tls_key_pem), ssl::context::pem);
      if (!options.client_ca_pem.empty()) {
        tls->add_certificate_authority(net::buffer(options.client_ca_pem));
        tls->set_verify_mode(ssl::verify_peer);  // a certificate is optional; tokens still work
      }
    } catch (const std::exception& e) {  // bad TLS material
      tls.reset();
      return Status::InvalidArgument(std::string("TLS: ") + e.what());
    }
    return Status::Ok();
  }
};

namespace {
// Calls `each(key, value)` for every `key[=value]` of `query`; stops when it returns true.
template <class Fn>
bool AnyParameter(const std::string& query, Fn&& each) {
  for (size_t start = 0; start <= query.size();) {
    size_t end = query.find('&', start);
    if (end == std::string::npos) end = query.size();
    const std::string_view param(query.data() + start, end - start);
    const size_t eq = param.find('=');
    const std::string_view value = eq == std::string_view::npos ? "" : param.substr(eq + 1);
    if (each(param.substr(0, eq), value)) return true;
    start = end + 1;
  }
  return false;
}
}  // namespace

bool HasQueryParameter(const std::string& query, const std::string& name) {
  return AnyParameter(query, [&](std::string_view key, std::string_view) { return key == name; });
}

std::vector<std::string> QueryParameterValues(const std::string& query, const std::string& name) {
  std::vector<std::string> values;
  AnyParameter(query, [&](std::string_view key, std::string_view value) {
    if (key == name) values.emplace_back(value);
    return false;
  });
  return values;
}

Server::Server(ServerOptions options, Handler handler)
    : impl_(std::make_unique<Impl>(std::move(options), std::move(handler))) {}

namespace {
ServerOptions Plain(std::string host, uint16_t port) {
  ServerOptions o;
  o.host = std::move(host);
  o.port = port;
  return o;
}
}  // namespace

Server::Server(std::string host, uint16_t port, Handler handler)
    : Server(Plain(std::move(host), port), std::move(handler)) {}

// Stop() joins the io thread, which cannot fail for our own running thread;
// should it throw all the same, say so rather than terminate the process.
Server::~Server() {
  try {
    Stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fencekeeper: stopping an HTTP server failed: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "fencekeeper: stopping an HTTP server failed\n");
  }
}

Status Server::Start() {
  Impl& s = *impl_;
  if (Status t = s.MakeTls(); !t.ok()) return t;
  // "cannot listen on HOST:PORT: address already in use"
  if (Status l = ListenOn(s.acceptor, s.options.host, s.options.port); !l.ok()) return l;
  s.port = s.acceptor.local_endpoint().port();
  net::co_spawn(s.io, s.Accept(), net::detached);
  s.thread = std::thread([&s] { s.io.run(); });
  return Status::Ok();
}

void Server::Stop() {
  Impl& s = *impl_;
  if (!s.thread.joinable()) return;
  net::post(s.io, [&s] {
    boost::system::error_code ec;
    s.acceptor.close(ec);
  });
  s.io.stop();
  s.thread.join();
  // Nothing runs the io context now: close the listener here (the posted
  // close may never have run), so that no client connects to a stopped server.
  boost::system::error_code ec;
  s.acceptor.close(ec);
}

uint16_t Server::port() const { return impl_->port; }

bool Server::tls() const { return impl_->tls != nullptr; }

}  // namespace fk::http
