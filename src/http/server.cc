#include "http/server.h"

#include "http/listen.h"

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>

namespace fk::http {
namespace net = boost::asio;
namespace beast = boost::beast;
namespace bhttp = beast::http;
using tcp = net::ip::tcp;

struct Server::Impl {
  std::string host;
  uint16_t port;
  Handler handler;
  net::io_context io;
  tcp::acceptor acceptor{io};
  std::thread thread;

  net::awaitable<void> Session(beast::tcp_stream stream) {
    beast::flat_buffer buffer;
    for (;;) {
      bhttp::request<bhttp::string_body> req;
      stream.expires_after(std::chrono::seconds(30));
      boost::system::error_code ec;
      co_await bhttp::async_read(stream, buffer, req, net::redirect_error(net::use_awaitable, ec));
      if (ec) break;
      const std::string target(req.target());
      const size_t mark = target.find('?');
      Request request{std::string(req.method_string()), target.substr(0, mark),
                      mark == std::string::npos ? "" : target.substr(mark + 1)};
      Reply reply = handler(request);
      bhttp::response<bhttp::string_body> res{static_cast<bhttp::status>(reply.status),
                                              req.version()};
      res.set(bhttp::field::content_type, reply.content_type);
      res.keep_alive(req.keep_alive());
      res.body() = std::move(reply.body);
      res.prepare_payload();
      co_await bhttp::async_write(stream, res, net::redirect_error(net::use_awaitable, ec));
      if (ec || !req.keep_alive()) break;
    }
    boost::system::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  net::awaitable<void> Accept() {
    for (;;) {
      boost::system::error_code ec;
      tcp::socket socket =
          co_await acceptor.async_accept(net::redirect_error(net::use_awaitable, ec));
      if (ec) co_return;
      net::co_spawn(io, Session(beast::tcp_stream(std::move(socket))), net::detached);
    }
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

Server::Server(std::string host, uint16_t port, Handler handler) : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->handler = std::move(handler);
}

Server::~Server() { Stop(); }

Status Server::Start() {
  if (Status s = ListenOn(impl_->acceptor, impl_->host, impl_->port); !s.ok()) return s;
  impl_->port = impl_->acceptor.local_endpoint().port();
  net::co_spawn(impl_->io, impl_->Accept(), net::detached);
  impl_->thread = std::thread([this] { impl_->io.run(); });
  return Status::Ok();
}

void Server::Stop() {
  if (!impl_->thread.joinable()) return;
  impl_->io.stop();
  impl_->thread.join();
}

uint16_t Server::port() const { return impl_->port; }

}  // namespace fk::http
