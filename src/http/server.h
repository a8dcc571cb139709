// A small HTTP/1.1 server (Boost.Beast) for /healthz, /readyz and /metrics.
// The handler runs on the server's own io thread and must be quick.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace fk::http {

struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "text/plain; charset=utf-8";
};

struct Request {
  std::string method;
  std::string path;   // the target up to '?'
  std::string query;  // after '?', as sent ("verbose", "a=1&b")
};

using Handler = std::function<Reply(const Request& request)>;

// Whether `query` holds the parameter `name`, with or without a value, as
// Kubernetes components read `?verbose`.
bool HasQueryParameter(const std::string& query, const std::string& name);
// The values of every `name=value` in `query`, in order, as Kubernetes
// components read `/readyz?exclude=a&exclude=b` (no percent-decoding: the
// values read this way are check names).
std::vector<std::string> QueryParameterValues(const std::string& query, const std::string& name);

class Server {
 public:
  Server(std::string host, uint16_t port, Handler handler);
  ~Server();
  Status Start();
  void Stop();
  uint16_t port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fk::http
