// Kubeconfig files and the cluster configuration's resolution order
// (kube/config.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "kube/config.h"
#include "test_support.h"

namespace fk::kube {
namespace {

TEST(Kubeconfig, ReadsKindStyleFilesWithRelativePathsAndData) {
  testing::TempDir dir;
  testing::WriteBytes(dir.File("ca.crt"), "CA-PEM");
  testing::WriteBytes(dir.File("token"), "file-token\n");
  testing::WriteBytes(dir.File("config"), R"(apiVersion: v1
kind: Config
current-context: kind-a
clusters:
- name: a
  cluster: {server: "https://127.0.0.1:6443", certificate-authority: ca.crt}
- name: b
  cluster: {server: "http://127.0.0.1:8080", insecure-skip-tls-verify: true}
users:
- name: a
  user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}
- name: b
  user: {tokenFile: token}
contexts:
- name: kind-a
  context: {cluster: a, user: a, namespace: agents}
- name: b
  context: {cluster: b, user: b}
)");
  auto a = LoadKubeconfig(dir.File("config"));
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->server, "https://127.0.0.1:6443");
  EXPECT_EQ(a->ca_pem, "CA-PEM");
  EXPECT_EQ(a->client_cert_pem, "CERT");
  EXPECT_EQ(a->client_key_pem, "KEY");
  EXPECT_EQ(a->default_namespace, "agents");
  auto b = LoadKubeconfig(dir.File("config"), "b");
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->insecure_skip_tls_verify);
  EXPECT_EQ(b->token_file, dir.File("token"));
}

TEST(Kubeconfig, BrokenFilesNameTheFileAndTheField) {
  testing::TempDir dir;
  const std::string path = dir.File("config");
  auto expect_error = [&](const std::string& yaml, const std::string& context,
                          const std::string& fragment) {
    testing::WriteBytes(path, yaml);
    auto r = LoadKubeconfig(path, context);
    ASSERT_FALSE(r.ok()) << yaml;
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
  };
  const std::string base =
      "clusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {}}]\n"
      "contexts: [{name: ctx, context: {cluster: c, user: u}}]\n";
  expect_error(base, "missing", "context 'missing' not found (contexts: ctx)");
  expect_error(base, "", "no current-context is set");
  expect_error("clusters: [}", "", "not valid YAML");
  expect_error(
      "clusters: [{name: c, cluster: {}}]\ncontexts: [{name: ctx, context: {cluster: c}}]\n", "ctx",
      "clusters[c].cluster.server is missing");
  expect_error(
      "clusters: [{name: c, cluster: {server: 'ftp://x'}}]\ncontexts: [{name: ctx, context: "
      "{cluster: c}}]\n",
      "ctx", "must start with http:// or https://");
  expect_error(
      "clusters: [{name: c, cluster: {server: 'https://x', certificate-authority-data: '!!!'}}]\n"
      "contexts: [{name: ctx, context: {cluster: c}}]\n",
      "ctx", "certificate-authority-data is not valid base64");
  testing::WriteBytes(path,
                      "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
                      "users: [{name: u, user: {tokenFile: /no/such/token}}]\n"
                      "contexts: [{name: ctx, context: {cluster: c, user: u}}]\n");
  auto missing_token = LoadKubeconfig(path, "ctx");
  ASSERT_FALSE(missing_token.ok());
  EXPECT_NE(missing_token.status().message().find("users[u].user.tokenFile"), std::string::npos);
  EXPECT_FALSE(LoadKubeconfig(dir.File("absent")).ok());
}

TEST(ClusterConfigResolution, FollowsTheDesignOrder) {
  testing::TempDir dir;
  const std::string kc =
      "clusters: [{name: c, cluster: {server: 'http://from-file:1'}}]\n"
      "contexts: [{name: ctx, context: {cluster: c}}]\ncurrent-context: ctx\n";
  testing::WriteBytes(dir.File("explicit"), kc);
  testing::WriteBytes(dir.File("env"),
                      "clusters: [{name: c, cluster: {server: 'http://from-env:1'}}]\n"
                      "contexts: [{name: ctx, context: {cluster: c}}]\ncurrent-context: ctx\n");
  std::filesystem::create_directories(dir.File("home/.kube"));
  testing::WriteBytes(dir.File("home/.kube/config"),
                      "clusters: [{name: c, cluster: {server: 'http://from-home:1'}}]\n"
                      "contexts: [{name: ctx, context: {cluster: c}}]\ncurrent-context: ctx\n");
  std::filesystem::create_directories(dir.File("sa"));
  testing::WriteBytes(dir.File("sa/token"), "sa-token");
  testing::WriteBytes(dir.File("sa/ca.crt"), "SA-CA");
  testing::WriteBytes(dir.File("sa/namespace"), "fencekeeper-system\n");
  std::map<std::string, std::string> env{{"KUBECONFIG", dir.File("env")},
                                         {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                         {"KUBERNETES_SERVICE_PORT", "443"},
                                         {"HOME", dir.File("home")}};
  Getenv getenv = [&](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  EXPECT_EQ(ResolveConfig(dir.File("explicit"), "", getenv, dir.File("sa"))->server,
            "http://from-file:1");
  EXPECT_EQ(ResolveConfig(std::nullopt, "", getenv, dir.File("sa"))->server, "http://from-env:1");
  env.erase("KUBECONFIG");
  auto in_cluster = ResolveConfig(std::nullopt, "", getenv, dir.File("sa"));
  ASSERT_TRUE(in_cluster.ok());
  EXPECT_EQ(in_cluster->server, "https://10.0.0.1:443");
  EXPECT_EQ(in_cluster->token_file, dir.File("sa/token"));
  EXPECT_EQ(in_cluster->ca_pem, "SA-CA");
  EXPECT_EQ(in_cluster->default_namespace, "fencekeeper-system");
  env["KUBERNETES_SERVICE_HOST"] = "fd00::1";
  EXPECT_EQ(ResolveConfig(std::nullopt, "", getenv, dir.File("sa"))->server,
            "https://[fd00::1]:443");
  env.erase("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(ResolveConfig(std::nullopt, "", getenv, dir.File("sa"))->server, "http://from-home:1");
}

}  // namespace
}  // namespace fk::kube
