// fencekeeper's one HTTP/1.1 server (Boost.Beast over Asio coroutines, on
// its own io thread), shared by the probe and metrics endpoints and by the
// API simulator: plain or TLS (optionally asking for a client certificate),
// keep-alive, and responses that are either whole or streamed as chunks (a
// watch). Beast and Asio stay in server.cc. Handlers run on the io thread and
// must be quick; a stream is pulled from it, never pushes.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace fk::http {

struct Request {
  std::string method;
  std::string path;    // the target up to '?'
  std::string query;   // after '?', as sent ("verbose", "a=1&b")
  std::string target;  // path and query, as sent
  std::string body;
  std::string authorization, content_type, accept;  // those headers, "" when absent
  bool client_certificate = false;  // TLS: a client certificate the client CA signed
};

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
  int retry_after_seconds = 0;  // > 0: a Retry-After header
};

// A response sent as chunks until it ends (a watch): 200, chunked, and the
// connection closes after it. The server pulls: it calls Next() at once, then
// whenever the stream wakes it or the time Next() asked for comes.
class Stream {
 public:
  virtual ~Stream() = default;
  struct Pull {
    std::vector<std::string> chunks;             // to send now, in order
    bool done = false;                           // nothing more after these chunks
    std::chrono::steady_clock::time_point next;  // pull again then, unless woken sooner
  };
  virtual Pull Next() = 0;
  // How the stream wakes the server (from any thread) when it has chunks:
  // set once, before the first Next().
  virtual void SetWaker(std::function<void()> wake) = 0;
  virtual std::string content_type() const { return "application/json"; }
};

// A whole reply, or (stream set) a streamed one.
struct Response {
  Reply reply;
  std::unique_ptr<Stream> stream;
  Response(Reply r) : reply(std::move(r)) {}  // NOLINT: a Reply is a Response
  explicit Response(std::unique_ptr<Stream> s) : stream(std::move(s)) {}
};

using Handler = std::function<Response(const Request& request)>;

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: pick a free port
  // TLS, when a certificate is given (PEM text, not paths). With a client CA,
  // a client certificate is asked for but not required.
  std::string tls_cert_pem, tls_key_pem, client_ca_pem;
  std::string server_name;  // the Server header ("" sends none)
  // How long a connection may sit idle between requests.
  std::chrono::seconds idle_timeout{30};
  // Waited before each request is handled (the simulator's injected latency).
  std::function<std::chrono::milliseconds()> latency;
  // A request with a longer body is not read: its connection is closed
  // unanswered, and the handler never sees it.
  size_t max_body_bytes = size_t{64} << 20;
};

// Whether `query` holds the parameter `name`, with or without a value, as
// Kubernetes components read `?verbose`.
bool HasQueryParameter(const std::string& query, const std::string& name);
// The values of every `name=value` in `query`, in order, as Kubernetes
// components read `/readyz?exclude=a&exclude=b` (no percent-decoding: the
// values read this way are check names).
std::vector<std::string> QueryParameterValues(const std::string& query, const std::string& name);

class Server {
 public:
  Server(ServerOptions options, Handler handler);
  // Plain HTTP on host:port.
  Server(std::string host, uint16_t port, Handler handler);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds and serves on a background thread; bad TLS material or an address
  // in use is an error naming it.
  Status Start();
  // Closes every connection and joins the thread. Idempotent.
  void Stop();
  uint16_t port() const;
  bool tls() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fk::http
