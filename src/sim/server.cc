// The simulator's HTTP server: Beast over Asio coroutines on one io thread.
// One coroutine per connection; a watch turns its connection into a chunked
// stream of newline-delimited JSON events until it times out, is dropped by a
// fault, or the client goes away. Everything else (discovery, control endpoints,
// faults, the resource verbs) is answered by sim/handler.h's Dispatch.
#include "sim/server.h"

#include <openssl/ssl.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/json.hpp>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <thread>
#include <variant>

#include "http/listen.h"
#include "kube/json_fields.h"
#include "sim/handler.h"
#include "sim/table.h"
#include "sim/watch_lines.h"

namespace fk::sim {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = net::ssl;
namespace json = boost::json;
using tcp = net::ip::tcp;
using Request = http::request<http::string_body>;

namespace {

constexpr auto kUse = net::use_awaitable;

// Runs its function when the scope ends, also when a coroutine frame is
// destroyed without resuming (server shutdown).
struct Cleanup {
  std::function<void()> fn;
  ~Cleanup() {
    if (fn) fn();
  }
};

struct WatchState : std::enable_shared_from_this<WatchState> {
  explicit WatchState(const net::any_io_executor& ex) : timer(ex) {}
  std::mutex mu;
  std::deque<std::string> lines;
  net::steady_timer timer;

  void Push(std::string line) {
    {
      std::lock_guard lock(mu);
      lines.push_back(std::move(line));
    }
    Wake();
  }
  void Wake() {
    net::post(timer.get_executor(), [self = shared_from_this()] { self->timer.cancel(); });
  }
  std::deque<std::string> Take() {
    std::lock_guard lock(mu);
    return std::exchange(lines, {});
  }
};

}  // namespace

struct Server::Impl {
  Impl(Simulator& s, ServerOptions o) : sim(s), options(std::move(o)), acceptor(io) {}

  Simulator& sim;
  ServerOptions options;
  net::io_context io;
  tcp::acceptor acceptor;
  std::unique_ptr<ssl::context> tls;
  std::thread thread;
  uint16_t port = 0;
  mutable std::mutex mu;
  std::map<std::string, int> auth_counts;
  std::optional<std::string> token;

  void CountAuth(const std::string& m) {
    std::lock_guard lock(mu);
    ++auth_counts[m];
  }

  // ---- request handling ------------------------------------------------------

  // "token", "certificate" or "none" when allowed; "" when not.
  std::string Authenticate(const Request& req, bool cert_ok) {
    std::optional<std::string> want;
    {
      std::lock_guard lock(mu);
      want = token;
    }
    const bool auth_required = want.has_value() || !options.client_ca_pem.empty();
    auto it = req.find(http::field::authorization);
    if (want && it != req.end() && it->value() == "Bearer " + *want) return "token";
    if (cert_ok) return "certificate";
    return auth_required ? "" : "none";
  }

  // ---- connections -------------------------------------------------------------

  template <class Stream>
  net::awaitable<bool> Write(Stream& stream, const Request& req, const ApiReply& r) {
    http::response<http::string_body> res{static_cast<http::status>(r.status), req.version()};
    res.set(http::field::server, "fencekeeper-sim");
    res.set(http::field::content_type, r.content_type);
    if (r.retry_after_seconds > 0)
      res.set(http::field::retry_after, std::to_string(r.retry_after_seconds));
    res.keep_alive(req.keep_alive());
    res.body() = r.body;
    res.prepare_payload();
    boost::system::error_code ec;
    co_await http::async_write(stream, res, net::redirect_error(kUse, ec));
    co_return !ec && req.keep_alive();
  }

  template <class Stream>
  net::awaitable<void> Watch(Stream& stream, const Request& req, const Target& t, const Route& r) {
    auto parsed = ParseWatchParams(t, r, sim.options().watch_list);
    if (auto* refused = std::get_if<ApiReply>(&parsed)) {
      co_await Write(stream, req, *refused);
      co_return;
    }
    const WatchParams& params = std::get<WatchParams>(parsed);
    auto state = std::make_shared<WatchState>(co_await net::this_coro::executor);
    const bool table = WantsTable(req[http::field::accept]) && HasPrinterColumns(*r.kind);
    const uint64_t epoch = sim.watch_epoch();
    const uint64_t waker = sim.AddWatchStream(
        [weak = std::weak_ptr<WatchState>(state)] {
          if (auto s = weak.lock()) s->Wake();
        },
        [weak = std::weak_ptr<WatchState>(state)](std::string raw) {
          if (auto s = weak.lock()) s->Push(std::move(raw));
        });
    Store::WatchStart start = sim.store().Watch(
        *r.kind, r.ns, params.from_rv,
        [state, route = r, ls = params.labels, fs = params.fields, table,
         &clock = sim.clock()](const StoredEvent& e) {
          const auto table_at = table ? std::optional(clock.Now()) : std::nullopt;
          std::string line = EventLine(e, route, ls, fs, table_at);
          if (!line.empty()) state->Push(std::move(line));
        },
        [state, &r, end = params.initial_events_end](int64_t rv) {
          if (end) state->Push(InitialEventsEndLine(r, rv));
        });
    Cleanup unregister{[this, waker, id = start.failure ? 0 : start.id] {
      sim.RemoveWatchStream(waker);
      if (id) sim.store().Unwatch(id);
    }};

    http::response<http::empty_body> res{http::status::ok, req.version()};
    res.set(http::field::server, "fencekeeper-sim");
    res.set(http::field::content_type, "application/json");
    res.chunked(true);
    res.keep_alive(false);
    http::response_serializer<http::empty_body> sr{res};
    boost::system::error_code ec;
    co_await http::async_write_header(stream, sr, net::redirect_error(kUse, ec));
    if (!ec && start.failure) {
      // Errors after the resourceVersion parsed travel as one ERROR event.
      co_await WriteLine(stream, ErrorLine(*start.failure), ec);
    } else if (!ec) {
      co_await StreamEvents(stream, *state, r, params, epoch, ec);
    }
    if (!ec)
      co_await net::async_write(stream, http::make_chunk_last(), net::redirect_error(kUse, ec));
  }

  template <class Stream>
  net::awaitable<void> WriteLine(Stream& stream, const std::string& line,
                                 boost::system::error_code& ec) {
    co_await net::async_write(stream, http::make_chunk(net::buffer(line)),
                              net::redirect_error(kUse, ec));
  }

  // The watch's events (and bookmarks) as chunks until the watch times out, a
  // fault drops it, or the client goes away (`ec`).
  template <class Stream>
  net::awaitable<void> StreamEvents(Stream& stream, WatchState& state, const Route& r,
                                    const WatchParams& params, uint64_t epoch,
                                    boost::system::error_code& ec) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(params.timeout_seconds);
    auto next_bookmark = std::chrono::steady_clock::now() + sim.options().bookmark_interval;
    int sent = 0;
    const int drop_after = sim.options().drop_watch_after_events;
    while (!ec) {
      const int64_t bookmark_rv = sim.store().CurrentResourceVersion();  // read before draining
      for (std::string& line : state.Take()) {
        co_await WriteLine(stream, line, ec);
        if (ec) break;
        ++sent;
      }
      if (ec || sim.watch_epoch() != epoch || (drop_after > 0 && sent >= drop_after)) break;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) break;
      if (params.bookmarks && now >= next_bookmark) {
        co_await WriteLine(stream, BookmarkLine(r, bookmark_rv), ec);
        next_bookmark = now + sim.options().bookmark_interval;
        continue;
      }
      state.timer.expires_at(params.bookmarks ? std::min(deadline, next_bookmark) : deadline);
      boost::system::error_code wait_ec;
      co_await state.timer.async_wait(net::redirect_error(kUse, wait_ec));
    }
  }

  // Serves one request; returns whether the connection stays open.
  template <class Stream>
  net::awaitable<bool> Serve(Stream& stream, const Request& req, bool cert_ok) {
    const std::string auth = Authenticate(req, cert_ok);
    CountAuth(auth.empty() ? "rejected" : auth);
    if (auth.empty())
      co_return co_await Write(stream, req, FailureReply(401, "Unauthorized", "Unauthorized"));

    if (sim.options().latency.count() > 0) {
      net::steady_timer delay(co_await net::this_coro::executor, sim.options().latency);
      boost::system::error_code ec;
      co_await delay.async_wait(net::redirect_error(kUse, ec));
    }
    const ApiRequest request{std::string(req.method_string()), std::string(req.target()),
                             req.body(), std::string(req[http::field::content_type]),
                             std::string(req[http::field::accept])};
    auto answer = Dispatch(sim, request, options.host + ":" + std::to_string(port));
    if (auto* reply = std::get_if<ApiReply>(&answer)) co_return co_await Write(stream, req, *reply);
    const WatchCall& watch = std::get<WatchCall>(answer);
    co_await Watch(stream, req, watch.target, watch.route);
    co_return false;
  }

  template <class Stream>
  net::awaitable<void> Session(Stream stream, bool cert_ok) {
    beast::flat_buffer buffer;
    for (;;) {
      http::request_parser<http::string_body> parser;
      parser.body_limit(std::uint64_t{64} * 1024 * 1024);
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(300));
      boost::system::error_code ec;
      co_await http::async_read(stream, buffer, parser, net::redirect_error(kUse, ec));
      if (ec) break;
      beast::get_lowest_layer(stream).expires_never();
      Request req = parser.release();
      if (!co_await Serve(stream, req, cert_ok)) break;
    }
    boost::system::error_code ignored;
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  net::awaitable<void> Accept() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket = co_await acceptor.async_accept(net::redirect_error(kUse, ec));
      if (ec) co_return;
      if (!tls) {
        net::co_spawn(io, Session(beast::tcp_stream(std::move(socket)), false), net::detached);
        continue;
      }
      net::co_spawn(
          io,
          [this, s = std::move(socket)]() mutable -> net::awaitable<void> {
            beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(s)), *tls);
            beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(30));
            boost::system::error_code hec;
            co_await stream.async_handshake(ssl::stream_base::server,
                                            net::redirect_error(kUse, hec));
            if (hec) co_return;
            bool cert_ok = false;
            if (X509* peer = SSL_get1_peer_certificate(stream.native_handle())) {
              cert_ok = SSL_get_verify_result(stream.native_handle()) == X509_V_OK;
              X509_free(peer);
            }
            co_await Session(std::move(stream), cert_ok);
          },
          net::detached);
    }
  }
};

Server::Server(Simulator& sim, ServerOptions options)
    : impl_(std::make_unique<Impl>(sim, std::move(options))) {
  impl_->token = impl_->options.bearer_token;
}

// Stop() joins the io thread, which cannot fail for our own running thread;
// should it throw all the same, say so rather than terminate the process.
Server::~Server() {
  try {
    Stop();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fencekeeper sim: stopping the server failed: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "fencekeeper sim: stopping the server failed\n");
  }
}

Status Server::Start() {
  Impl& s = *impl_;
  try {
    if (!s.options.tls_cert_pem.empty()) {
      s.tls = std::make_unique<ssl::context>(ssl::context::tls_server);
      s.tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                         ssl::context::no_sslv3);
      s.tls->use_certificate_chain(net::buffer(s.options.tls_cert_pem));
      s.tls->use_private_key(net::buffer(s.options.tls_key_pem), ssl::context::pem);
      if (!s.options.client_ca_pem.empty()) {
        s.tls->add_certificate_authority(net::buffer(s.options.client_ca_pem));
        s.tls->set_verify_mode(ssl::verify_peer);  // a certificate is optional; tokens still work
      }
    }
  } catch (const std::exception& e) {  // bad TLS material
    return Status::InvalidArgument(std::string("simulator TLS: ") + e.what());
  }
  if (Status listening = fk::http::ListenOn(s.acceptor, s.options.host, s.options.port);
      !listening.ok()) {
    return listening;  // "cannot listen on HOST:PORT: address already in use"
  }
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
}

uint16_t Server::port() const { return impl_->port; }

std::string Server::url() const {
  return std::string(impl_->tls ? "https://" : "http://") + impl_->options.host + ":" +
         std::to_string(impl_->port);
}

void Server::SetBearerToken(std::string token) {
  std::lock_guard lock(impl_->mu);
  impl_->token = std::move(token);
}

int Server::AuthCount(const std::string& method) const {
  std::lock_guard lock(impl_->mu);
  auto it = impl_->auth_counts.find(method);
  return it == impl_->auth_counts.end() ? 0 : it->second;
}

Status WriteKubeconfig(const std::string& path, const std::string& server_url) {
  std::ofstream out(path);
  if (!out) return Status::IOError("cannot write kubeconfig '" + path + "'");
  out << "apiVersion: v1\nkind: Config\n"
      << "clusters:\n- name: fencekeeper-sim\n  cluster:\n    server: " << server_url << "\n"
      << "users:\n- name: fencekeeper-sim\n  user: {}\n"
      << "contexts:\n- name: fencekeeper-sim\n  context:\n    cluster: fencekeeper-sim\n    user: "
         "fencekeeper-sim\n"
      << "current-context: fencekeeper-sim\n";
  return out ? Status::Ok() : Status::IOError("cannot write kubeconfig '" + path + "'");
}

}  // namespace fk::sim
