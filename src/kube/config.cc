#include "kube/config.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fk::kube {
namespace fs = std::filesystem;

namespace {

Result<std::string> ReadWholeFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound(what + ": cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Trim(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return s.substr(i);
}

// Finds the entry named `name` in a kubeconfig list (clusters, users, contexts).
std::optional<YAML::Node> Named(const YAML::Node& list, const std::string& name) {
  if (!list || !list.IsSequence()) return std::nullopt;
  for (const auto& item : list) {
    if (item["name"] && item["name"].as<std::string>() == name) return item;
  }
  return std::nullopt;
}

std::string Names(const YAML::Node& list) {
  std::string out;
  if (!list || !list.IsSequence()) return "none";
  for (const auto& item : list) {
    if (!item["name"]) continue;
    if (!out.empty()) out += ", ";
    out += item["name"].as<std::string>();
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::optional<std::string> DecodeBase64(const std::string& text) {
  static const std::string kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  uint32_t acc = 0;
  int bits = 0, padding = 0;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    if (c == '=') {
      ++padding;
      continue;
    }
    if (padding) return std::nullopt;  // data after padding
    const auto pos = kAlphabet.find(c);
    if (pos == std::string::npos) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  if (padding > 2) return std::nullopt;
  return out;
}

namespace {

// A kubeconfig being read: how messages name it, and the directory its
// relative file paths are relative to (as kubectl resolves them).
struct KubeconfigFile {
  std::string where;
  fs::path dir;

  std::string Resolve(const std::string& p) const {
    return fs::path(p).is_absolute() ? p : (dir / p).string();
  }

  // `<key>-data` (inline base64) wins over `<key>` (a file name), as in
  // client-go; with neither, `out` is left as it is.
  Status DataOrFile(const YAML::Node& node, const std::string& key, const std::string& field,
                    std::string* out) const {
    if (node[key + "-data"]) {
      auto decoded = DecodeBase64(node[key + "-data"].as<std::string>());
      if (!decoded)
        return Status::InvalidArgument(where + ": " + field + "-data is not valid base64");
      *out = *decoded;
    } else if (node[key]) {
      auto content = ReadWholeFile(Resolve(node[key].as<std::string>()), where + ": " + field);
      if (!content.ok()) return content.status();
      *out = *content;
    }
    return Status::Ok();
  }
};

Result<YAML::Node> ParseKubeconfig(const std::string& text, const std::string& where) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(where + " is not valid YAML: " + e.what());
  }
  if (!root || !root.IsMap()) return Status::InvalidArgument(where + " is not a YAML mapping");
  return root;
}

// The context asked for, or else the file's current-context.
Result<std::string> ContextName(const YAML::Node& root, const std::string& where,
                                const std::string& requested) {
  if (!requested.empty()) return requested;
  if (!root["current-context"] || root["current-context"].as<std::string>().empty()) {
    return Status::InvalidArgument(
        where + ": no current-context is set and no --context was given (contexts: " +
        Names(root["contexts"]) + ")");
  }
  return root["current-context"].as<std::string>();
}

// The server, its TLS settings and CA of cluster `name` (named by context `ctx`).
Status ReadCluster(const YAML::Node& root, const KubeconfigFile& file, const std::string& ctx,
                   const std::string& name, ClusterConfig& cfg) {
  const std::string& where = file.where;
  const std::optional<YAML::Node> cluster = Named(root["clusters"], name);
  if (!cluster || !(*cluster)["cluster"]) {
    return Status::InvalidArgument(where + ": cluster '" + name + "' (of context '" + ctx +
                                   "') not found (clusters: " + Names(root["clusters"]) + ")");
  }
  const YAML::Node cl = (*cluster)["cluster"];
  if (!cl["server"] || cl["server"].as<std::string>().empty()) {
    return Status::InvalidArgument(where + ": clusters[" + name + "].cluster.server is missing");
  }
  cfg.server = cl["server"].as<std::string>();
  if (cfg.server.rfind("http://", 0) != 0 && cfg.server.rfind("https://", 0) != 0) {
    return Status::InvalidArgument(where + ": clusters[" + name + "].cluster.server '" +
                                   cfg.server + "' must start with http:// or https://");
  }
  if (cl["insecure-skip-tls-verify"])
    cfg.insecure_skip_tls_verify = cl["insecure-skip-tls-verify"].as<bool>();
  if (cl["tls-server-name"]) cfg.tls_server_name = cl["tls-server-name"].as<std::string>();
  return file.DataOrFile(cl, "certificate-authority",
                         "clusters[" + name + "].cluster.certificate-authority", &cfg.ca_pem);
}

// A user's credentials: a token, a token file (read once now, so a missing
// file is an error at start-up) or a client certificate and key. exec and
// auth-provider plugins are refused rather than silently ignored.
Status ReadCredentials(const YAML::Node& u, const KubeconfigFile& file, const std::string& field,
                       ClusterConfig& cfg) {
  const std::string& where = file.where;
  if (u["token"]) cfg.token = u["token"].as<std::string>();
  if (u["tokenFile"]) {
    cfg.token_file = file.Resolve(u["tokenFile"].as<std::string>());
    auto t = ReadWholeFile(cfg.token_file, where + ": " + field + "tokenFile");
    if (!t.ok()) return t.status();
  }
  if (Status s = file.DataOrFile(u, "client-certificate", field + "client-certificate",
                                 &cfg.client_cert_pem);
      !s.ok())
    return s;
  if (Status s = file.DataOrFile(u, "client-key", field + "client-key", &cfg.client_key_pem);
      !s.ok())
    return s;
  if (cfg.client_cert_pem.empty() != cfg.client_key_pem.empty()) {
    return Status::InvalidArgument(where + ": " + field +
                                   "client-certificate and client-key must be given together");
  }
  if (u["exec"] || u["auth-provider"]) {
    return Status::InvalidArgument(where + ": " + field +
                                   "exec and auth-provider credentials are not supported; "
                                   "use a token, tokenFile or client certificate");
  }
  return Status::Ok();
}

// User `name` (named by context `ctx`); a user entry without a mapping has no credentials.
Status ReadUser(const YAML::Node& root, const KubeconfigFile& file, const std::string& ctx,
                const std::string& name, ClusterConfig& cfg) {
  const std::optional<YAML::Node> user = Named(root["users"], name);
  if (!user) {
    return Status::InvalidArgument(file.where + ": user '" + name + "' (of context '" + ctx +
                                   "') not found (users: " + Names(root["users"]) + ")");
  }
  const YAML::Node u = (*user)["user"];
  if (!u || !u.IsMap()) return Status::Ok();
  return ReadCredentials(u, file, "users[" + name + "].user.", cfg);
}

}  // namespace

Result<ClusterConfig> LoadKubeconfig(const std::string& path, const std::string& context_name) {
  auto text = ReadWholeFile(path, "kubeconfig");
  if (!text.ok()) return text.status();
  const KubeconfigFile file{"kubeconfig '" + path + "'", fs::path(path).parent_path()};
  const std::string& where = file.where;
  auto root = ParseKubeconfig(*text, where);
  if (!root.ok()) return root.status();
  try {
    auto ctx = ContextName(*root, where, context_name);
    if (!ctx.ok()) return ctx.status();
    const std::optional<YAML::Node> context = Named((*root)["contexts"], *ctx);
    if (!context) {
      return Status::InvalidArgument(where + ": context '" + *ctx +
                                     "' not found (contexts: " + Names((*root)["contexts"]) + ")");
    }
    const YAML::Node c = (*context)["context"];
    if (!c || !c["cluster"])
      return Status::InvalidArgument(where + ": contexts[" + *ctx + "].context.cluster is missing");
    ClusterConfig cfg;
    cfg.source = where + " (context " + *ctx + ")";
    if (Status s = ReadCluster(*root, file, *ctx, c["cluster"].as<std::string>(), cfg); !s.ok())
      return s;
    if (c["user"]) {
      if (Status s = ReadUser(*root, file, *ctx, c["user"].as<std::string>(), cfg); !s.ok())
        return s;
    }
    if (c["namespace"]) cfg.default_namespace = c["namespace"].as<std::string>();
    return cfg;
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(where + ": unexpected structure: " + e.what());
  }
}

Getenv ProcessEnv() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

Result<ClusterConfig> LoadInCluster(const Getenv& env, const std::string& sa_dir) {
  auto host = env("KUBERNETES_SERVICE_HOST");
  auto port = env("KUBERNETES_SERVICE_PORT");
  if (!host || !port || host->empty() || port->empty()) {
    return Status::NotFound(
        "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not "
        "set");
  }
  ClusterConfig cfg;
  cfg.source = "in-cluster service account (" + sa_dir + ")";
  const bool ipv6 = host->find(':') != std::string::npos;
  cfg.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  cfg.token_file = sa_dir + "/token";
  auto token = ReadWholeFile(cfg.token_file, "in-cluster token");
  if (!token.ok()) return token.status();
  auto ca = ReadWholeFile(sa_dir + "/ca.crt", "in-cluster CA");
  if (ca.ok()) cfg.ca_pem = *ca;  // client-go logs and continues without it
  if (auto ns = env("POD_NAMESPACE"); ns && !ns->empty()) {
    cfg.default_namespace = *ns;
  } else if (auto nsf = ReadWholeFile(sa_dir + "/namespace", "namespace");
             nsf.ok() && !Trim(*nsf).empty()) {
    cfg.default_namespace = Trim(*nsf);
  }
  return cfg;
}

Result<ClusterConfig> ResolveConfig(const std::optional<std::string>& kubeconfig,
                                    const std::string& context, const Getenv& env,
                                    const std::string& sa_dir) {
  if (kubeconfig) return LoadKubeconfig(*kubeconfig, context);
  if (auto kc = env("KUBECONFIG"); kc && !kc->empty()) {
    return LoadKubeconfig(kc->substr(0, kc->find(':')), context);
  }
  auto in_cluster = LoadInCluster(env, sa_dir);
  if (in_cluster.ok() || in_cluster.status().code() != Code::kNotFound ||
      (env("KUBERNETES_SERVICE_HOST") && env("KUBERNETES_SERVICE_PORT"))) {
    return in_cluster;
  }
  auto home = env("HOME");
  if (!home)
    return Status::NotFound(
        "no kubeconfig: --kubeconfig not given, $KUBECONFIG unset, not in a cluster, and $HOME "
        "unset");
  return LoadKubeconfig(*home + "/.kube/config", context);
}

}  // namespace fk::kube
