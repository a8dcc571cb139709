// The simulator's HTTP face: a Kubernetes API server over HTTP/1.1 (plain or
// TLS) on its own thread, serving a Simulator. Beast stays inside server.cc.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "common/status.h"
#include "sim/simulator.h"

namespace fk::sim {

struct ServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0: pick a free port
  // TLS, when a certificate is given. PEM text, not paths.
  std::string tls_cert_pem;
  std::string tls_key_pem;
  // Authentication. With neither set, every request is allowed. With a token,
  // "Authorization: Bearer <token>" is accepted; with a client CA, a client
  // certificate it signed is accepted. Anything else gets 401.
  std::optional<std::string> bearer_token;
  std::string client_ca_pem;
};

class Server {
 public:
  Server(Simulator& sim, ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  Status Start();  // binds and serves on a background thread
  void Stop();     // closes every connection and joins the thread

  uint16_t port() const;
  std::string url() const;  // http://127.0.0.1:PORT or https://...
  // Changes the accepted bearer token (tests rotate tokens with it).
  void SetBearerToken(std::string token);
  // Requests served per authentication method: "token", "certificate", "none", "rejected".
  int AuthCount(const std::string& method) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What a client needs to reach a server: where it is, which certificates to
// trust (PEM; empty for plain HTTP) and which bearer token to send (empty for
// none).
struct KubeconfigAccess {
  std::string server_url;
  std::string ca_pem;
  std::string token;
};

// Writes a kubeconfig with which any client (fencekeeper, kubectl) reaches the
// server as `access` says, with no edit.
Status WriteKubeconfig(const std::string& path, const KubeconfigAccess& access);

}  // namespace fk::sim
