// Where the API server is and how to authenticate to it: kubeconfig files,
// in-cluster service-account config, and the resolution order of
// docs/design.md#where-the-cluster-configuration-comes-from (--kubeconfig, then $KUBECONFIG, then
// in-cluster, then ~/.kube/config).
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "common/status.h"

namespace fk::kube {

struct ClusterConfig {
  std::string server;  // https://host:port or http://host:port, possibly with a path
  std::string ca_pem;  // PEM; empty: the system trust store
  bool insecure_skip_tls_verify = false;
  std::string tls_server_name;
  std::string token;       // a static bearer token
  std::string token_file;  // a bearer token re-read periodically and after a 401
  std::string client_cert_pem;
  std::string client_key_pem;
  std::string default_namespace = "default";
  std::string source;  // for messages: "kubeconfig /x (context y)" or "in-cluster"
};

// Reads a kubeconfig. `context` empty means current-context. Relative file
// paths are relative to the kubeconfig's directory. Errors name the file and
// the field.
Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context = "");

using Getenv = std::function<std::optional<std::string>(const std::string&)>;
Getenv ProcessEnv();

inline constexpr const char* kServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount";

// In-cluster config from KUBERNETES_SERVICE_HOST/PORT and the service-account
// directory (token, ca.crt, namespace).
Result<ClusterConfig> LoadInCluster(const Getenv& env,
                                    const std::string& sa_dir = kServiceAccountDir);

// The documented order: an explicit kubeconfig, $KUBECONFIG (first file of the
// list), in-cluster, ~/.kube/config.
Result<ClusterConfig> ResolveConfig(const std::optional<std::string>& kubeconfig,
                                    const std::string& context, const Getenv& env,
                                    const std::string& sa_dir = kServiceAccountDir);

// Standard base64 (as kubeconfig *-data fields use); nullopt if malformed.
std::optional<std::string> DecodeBase64(const std::string& text);

}  // namespace fk::kube
