// The Kubernetes client against the simulator over real sockets: typed
// errors, retries honouring Retry-After, backoff, TLS, bearer tokens, client
// certificates, token rotation, discovery, and informers that see every
// change exactly once through dropped watches, 410s and garbage.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <condition_variable>
#include <fstream>
#include <set>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/informer.h"
#include "sim/server.h"
#include "sim/simulator.h"
#include "test_support.h"
#include "tls_util.h"

namespace fk::kube {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

const std::string kSandboxes = "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";

using fk::testing::Eventually;

class ClientTest : public ::testing::Test {
 protected:
  void StartServer(sim::ServerOptions options = {}, sim::SimOptions sim_options = {}) {
    sim_ = std::make_unique<sim::Simulator>(sim_options);
    server_ = std::make_unique<sim::Server>(*sim_, options);
    ASSERT_TRUE(server_->Start().ok());
    config_.server = server_->url();
  }
  void TearDown() override {
    client_.reset();
    server_.reset();
    sim_.reset();
  }
  ApiClient& Client(ClientOptions options = {}) {
    if (!options.time) options.time = &time_;  // records every wait instead of sleeping
    auto c = ApiClient::Create(config_, options);
    EXPECT_TRUE(c.ok()) << c.status().ToString();
    client_ = std::move(*c);
    return *client_;
  }
  std::string SandboxJson(const std::string& name, const std::string& extra = "") {
    return R"({"apiVersion":"agents.x-k8s.io/v1beta1","kind":"Sandbox","metadata":{"name":")" + name +
           R"(","namespace":"ns")" + extra + R"(},"spec":{"operatingMode":"Running"}})";
  }

  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<sim::Server> server_;
  ClusterConfig config_;
  ManualTimeSource time_;
  std::unique_ptr<ApiClient> client_;
};

TEST_F(ClientTest, CreateGetPatchAndTypedErrors) {
  StartServer();
  ApiClient& c = Client();
  ApiResponse created = c.Send("POST", kSandboxes, SandboxJson("a"), "application/json");
  ASSERT_TRUE(created.ok()) << created.error.ToString();
  EXPECT_EQ(created.status, 201);
  // The agent-sandbox emulation has written status since; patch against what is there now.
  ApiResponse current = c.Get(kSandboxes + "/a");
  ASSERT_TRUE(current.ok());
  const std::string rv(json::parse(current.body).at("metadata").at("resourceVersion").as_string());

  ApiResponse missing = c.Get(kSandboxes + "/nope");
  EXPECT_EQ(missing.error.kind, ApiErrorKind::kNotFound);
  EXPECT_EQ(missing.error.reason, "NotFound");
  EXPECT_NE(missing.error.message.find("\"nope\" not found"), std::string::npos);

  ApiResponse patched = c.MergePatch(kSandboxes + "/a", R"({"metadata":{"resourceVersion":")" + rv +
                                                            R"("},"spec":{"operatingMode":"Suspended"}})");
  ASSERT_TRUE(patched.ok()) << patched.error.ToString();
  EXPECT_EQ(json::parse(patched.body).at("metadata").at("generation"), 2);

  // The same conditional patch again carries a stale resourceVersion: 409, never retried.
  ApiResponse stale = c.MergePatch(kSandboxes + "/a", R"({"metadata":{"resourceVersion":")" + rv +
                                                          R"("},"spec":{"operatingMode":"Running"}})");
  EXPECT_EQ(stale.error.kind, ApiErrorKind::kConflict);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"), 2);
  EXPECT_TRUE(time_.sleeps().empty());

  EXPECT_EQ(c.Send("POST", kSandboxes, SandboxJson("a"), "application/json").error.kind, ApiErrorKind::kAlreadyExists);
  ApiResponse invalid = c.Send("PUT", kSandboxes + "/a", SandboxJson("a"), "application/json");
  EXPECT_EQ(invalid.error.kind, ApiErrorKind::kInvalid);
  ApiResponse media = c.Send("PATCH", kSandboxes + "/a", "{}", "application/strategic-merge-patch+json");
  EXPECT_EQ(media.error.kind, ApiErrorKind::kUnsupportedMedia);
  ApiResponse json_patch = c.Send("PATCH", kSandboxes + "/a", R"([{"op":"test","path":"/spec/operatingMode","value":"Running"}])",
                                  "application/json-patch+json");
  EXPECT_EQ(json_patch.status, 422);
}

TEST_F(ClientTest, TooManyRequestsHonoursRetryAfter) {
  StartServer();
  ApiClient& c = Client();
  sim_->AddFault({"list", "sandboxes", 429, 3, false, "", 1});
  ApiResponse r = c.Get(kSandboxes);
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  ASSERT_EQ(time_.sleeps().size(), 1u);
  EXPECT_EQ(time_.sleeps().at(0), 3000ms);
  EXPECT_EQ(sim_->RequestCount("list", "sandboxes"), 2);
  // The plain-text form of API priority and fairness is understood too.
  sim_->AddFault({"list", "sandboxes", 429, 1, true, "", 1});
  r = c.Get(kSandboxes);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(time_.sleeps().back(), 1000ms);
}

TEST_F(ClientTest, ServerErrorsAreRetriedWithGrowingBackoff) {
  StartServer();
  ClientOptions o;
  o.initial_backoff = 100ms;
  ApiClient& c = Client(o);
  sim_->AddFault({"get", "sandboxes", 503, 0, false, "", 3});
  c.Send("POST", kSandboxes, SandboxJson("a"), "application/json");
  ApiResponse r = c.Get(kSandboxes + "/a");
  ASSERT_TRUE(r.ok()) << r.error.ToString();
  ASSERT_EQ(time_.sleeps().size(), 3u);
  EXPECT_GE(time_.sleeps().at(0), 100ms);
  EXPECT_LT(time_.sleeps().at(0), 200ms);
  EXPECT_GE(time_.sleeps().at(1), 200ms);
  EXPECT_LT(time_.sleeps().at(1), 400ms);
  EXPECT_GE(time_.sleeps().at(2), 400ms);
  EXPECT_EQ(sim_->RequestCount("get", "sandboxes"), 4);

  sim_->AddFault({"get", "sandboxes", 500, 0, false, "", -1});
  ApiResponse exhausted = c.Get(kSandboxes + "/a");
  EXPECT_EQ(exhausted.error.kind, ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("get", "sandboxes"), 4 + 1 + o.max_retries);
}

TEST_F(ClientTest, TransportErrorsAreClear) {
  StartServer();
  config_.server = "http://127.0.0.1:1";  // nothing listens there
  ClientOptions o;
  o.max_retries = 1;
  ApiResponse r = Client(o).Get("/api");
  EXPECT_EQ(r.error.kind, ApiErrorKind::kTransport);
  EXPECT_NE(r.error.message.find("cannot connect to 127.0.0.1:1"), std::string::npos) << r.error.message;
}

TEST_F(ClientTest, RateLimiterSpacesRequestsBeyondTheBurst) {
  StartServer();
  ClientOptions o;
  o.qps = 2;
  o.burst = 2;
  ApiClient& c = Client(o);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(c.Get("/api").ok());
  // Two go at once; the next two each wait about half a second (recorded, not slept).
  ASSERT_EQ(time_.sleeps().size(), 2u);
  EXPECT_GE(time_.sleeps().at(0), 400ms);
  EXPECT_GE(time_.sleeps().at(1), 400ms);
}

TEST_F(ClientTest, DiscoversTheSandboxVersion) {
  StartServer();
  auto v = Client().DiscoverSandboxVersion();
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(*v, "v1beta1");
  client_.reset();
  server_.reset();
  sim::SimOptions old;
  old.serve_sandbox_v1beta1 = false;
  StartServer({}, old);
  auto fallback = Client().DiscoverSandboxVersion();
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(*fallback, "v1alpha1");
  ApiResponse alpha = client_->Send("POST", "/apis/agents.x-k8s.io/v1alpha1/namespaces/ns/sandboxes",
                                    R"({"metadata":{"name":"x"},"spec":{"replicas":0}})", "application/json");
  ASSERT_TRUE(alpha.ok()) << alpha.error.ToString();
  EXPECT_EQ(json::parse(alpha.body).at("spec").at("replicas"), 0);
  EXPECT_EQ(client_->Get(kSandboxes).error.kind, ApiErrorKind::kNotFound);  // v1beta1 is not served
}

TEST_F(ClientTest, SeveralMebibyteObjectsRoundTrip) {
  StartServer();
  ApiClient& c = Client();
  const std::string big(5 << 20, 'x');
  ApiResponse created = c.Send("POST", kSandboxes, SandboxJson("big", R"(,"annotations":{"blob":")" + big + R"("})"),
                               "application/json");
  ASSERT_TRUE(created.ok()) << created.error.ToString();
  ApiResponse got = c.Get(kSandboxes + "/big");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(json::parse(got.body).at("metadata").at("annotations").at("blob").as_string().size(), big.size());
}

// ---- authentication -----------------------------------------------------------

TEST_F(ClientTest, TlsVerifiesTheServerAgainstTheConfiguredCa) {
  const auto pki = testing::MakeTestPki("right-ca");
  const auto other = testing::MakeTestPki("wrong-ca");
  sim::ServerOptions so;
  so.tls_cert_pem = pki.server_cert;
  so.tls_key_pem = pki.server_key;
  StartServer(so);
  ASSERT_EQ(config_.server.rfind("https://", 0), 0u);

  config_.ca_pem = pki.ca_cert;
  EXPECT_TRUE(Client().Get("/api").ok());

  config_.ca_pem = other.ca_cert;
  ClientOptions o;
  o.max_retries = 0;
  ApiResponse wrong = Client(o).Get("/api");
  EXPECT_EQ(wrong.error.kind, ApiErrorKind::kTransport);
  EXPECT_NE(wrong.error.message.find("certificate verify failed"), std::string::npos) << wrong.error.message;

  config_.insecure_skip_tls_verify = true;
  EXPECT_TRUE(Client().Get("/api").ok());

  config_.insecure_skip_tls_verify = false;
  config_.ca_pem = "not a certificate";
  auto bad = ApiClient::Create(config_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("certificate authority is not valid PEM"), std::string::npos);
}

TEST_F(ClientTest, BearerTokenAndClientCertificateReachTheServer) {
  const auto pki = testing::MakeTestPki();
  sim::ServerOptions so;
  so.tls_cert_pem = pki.server_cert;
  so.tls_key_pem = pki.server_key;
  so.client_ca_pem = pki.ca_cert;
  so.bearer_token = "s3cret";
  StartServer(so);
  config_.ca_pem = pki.ca_cert;

  ClientOptions o;
  o.max_retries = 0;
  EXPECT_EQ(Client(o).Get("/api").error.kind, ApiErrorKind::kUnauthorized);
  EXPECT_EQ(server_->AuthCount("rejected"), 1);

  config_.token = "s3cret";
  EXPECT_TRUE(Client(o).Get("/api").ok());
  EXPECT_EQ(server_->AuthCount("token"), 1);

  config_.token.clear();
  config_.client_cert_pem = pki.client_cert;
  config_.client_key_pem = pki.client_key;
  EXPECT_TRUE(Client(o).Get("/api").ok());
  EXPECT_EQ(server_->AuthCount("certificate"), 1);
}

TEST_F(ClientTest, TokenFileIsReReadAfterA401AndPeriodically) {
  sim::ServerOptions so;
  so.bearer_token = "token-1";
  StartServer(so);
  testing::TempDir dir;
  const std::string token_file = dir.File("token");
  testing::WriteBytes(token_file, "token-1\n");
  config_.token_file = token_file;
  ManualTimeSource clock(std::chrono::system_clock::from_time_t(1'800'000'000));
  ClientOptions o;
  o.time = &clock;
  ApiClient& c = Client(o);
  ASSERT_TRUE(c.Get("/api").ok());

  // The projected token rotates: the first request gets a 401, re-reads the file, succeeds.
  testing::WriteBytes(token_file, "token-2\n");
  server_->SetBearerToken("token-2");
  ASSERT_TRUE(c.Get("/api").ok());
  EXPECT_EQ(server_->AuthCount("rejected"), 1);

  // After a minute the file is re-read before sending: no 401 at all.
  testing::WriteBytes(token_file, "token-3\n");
  server_->SetBearerToken("token-3");
  clock.Advance(61s);
  ASSERT_TRUE(c.Get("/api").ok());
  EXPECT_EQ(server_->AuthCount("rejected"), 1);
  EXPECT_EQ(server_->AuthCount("token"), 3);
}

// ---- informers ------------------------------------------------------------------

// Collects changes seen by an informer, thread-safely.
struct Seen {
  std::mutex mu;
  std::vector<Change> changes;
  void Add(const Change& c) {
    std::lock_guard lock(mu);
    changes.push_back(c);
  }
  std::multiset<std::string> Keys() {  // "TYPE name@rv"
    std::lock_guard lock(mu);
    std::multiset<std::string> out;
    for (const auto& c : changes) {
      out.insert(std::string(c.type == ChangeType::kAdded ? "A" : c.type == ChangeType::kModified ? "M" : "D") + " " +
                 c.name + "@" + c.resource_version);
    }
    return out;
  }
  size_t size() {
    std::lock_guard lock(mu);
    return changes.size();
  }
};

class InformerTest : public ClientTest {
 protected:
  void SetUp() override {
    sim::SimOptions quiet;
    quiet.emulate_agent_sandbox = false;  // every write below is the test's own
    StartServer({}, quiet);
    Client();
    // Backoffs in these tests are real but short.
    io_.initial_backoff = 5ms;
    io_.max_backoff = 50ms;
    informer_ = std::make_unique<Informer>(*client_, ResourceRef{"agents.x-k8s.io", "v1beta1", "sandboxes", true}, io_);
    informer_->Subscribe([this](const Change& c) { seen_.Add(c); });
  }
  void TearDown() override {
    informer_.reset();
    ClientTest::TearDown();
  }
  // What the server holds, as "name@rv".
  std::set<std::string> ServerState() {
    std::set<std::string> out;
    auto l = sim_->store().List(*sim::FindKind("agents.x-k8s.io", "sandboxes"), "", sim::Selector(), sim::Selector());
    for (const auto& o : l.items) {
      out.insert(std::string(o.at("metadata").at("name").as_string()) + "@" +
                 std::string(o.at("metadata").at("resourceVersion").as_string()));
    }
    return out;
  }
  std::set<std::string> CacheState() {
    std::set<std::string> out;
    for (const auto& o : informer_->store().List()) {
      out.insert(std::string(o->at("metadata").at("name").as_string()) + "@" +
                 std::string(o->at("metadata").at("resourceVersion").as_string()));
    }
    return out;
  }
  // Creates, relabels and deletes sandboxes, returning the change each write
  // should produce ("TYPE name@rv"). `between` runs after every write.
  std::multiset<std::string> Churn(const std::string& prefix, int n, const std::function<void(int)>& between = {}) {
    std::multiset<std::string> expected;
    auto& store = sim_->store();
    const auto* kind = sim::FindKind("agents.x-k8s.io", "sandboxes");
    int step = 0;
    auto rv = [](const sim::Outcome& o) { return std::string(o.object.at("metadata").at("resourceVersion").as_string()); };
    for (int i = 0; i < n; ++i) {
      const std::string name = prefix + std::to_string(i);
      auto o = store.Create(*kind, "ns", json::parse(R"({"metadata":{"name":")" + name + R"("},"spec":{"operatingMode":"Running"}})"));
      expected.insert("A " + name + "@" + rv(o));
      if (between) between(step++);
    }
    for (int i = 0; i < n; i += 2) {
      const std::string name = prefix + std::to_string(i);
      auto o = store.Mutate(*kind, "ns", name, [](json::value& v) -> std::optional<sim::ApiFailure> {
        v.at("metadata").as_object()["labels"] = {{"touched", "yes"}};
        return std::nullopt;
      }, false);
      expected.insert("M " + name + "@" + rv(o));
      if (between) between(step++);
    }
    for (int i = 0; i < n; i += 3) {
      const std::string name = prefix + std::to_string(i);
      auto o = store.Delete(*kind, "ns", name, std::nullopt, std::nullopt);
      expected.insert("D " + name + "@" + rv(o));
      if (between) between(step++);
    }
    return expected;
  }

  InformerOptions io_;
  std::unique_ptr<Informer> informer_;
  Seen seen_;
};

TEST_F(InformerTest, ListThenWatchSeesEveryChangeExactlyOnce) {
  ASSERT_TRUE(client_->Send("POST", kSandboxes, SandboxJson("pre"), "application/json").ok());
  informer_->Start();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  EXPECT_EQ(informer_->store().size(), 1u);
  std::multiset<std::string> expected = seen_.Keys();  // the initial ADDED from the list
  auto churn = Churn("s", 12);
  expected.insert(churn.begin(), churn.end());
  ASSERT_TRUE(Eventually([&] { return seen_.size() >= expected.size(); }));
  ASSERT_TRUE(Eventually([&] { return CacheState() == ServerState(); }));
  EXPECT_EQ(seen_.Keys(), expected);  // every change, once, nothing else
  EXPECT_EQ(informer_->stats().lists, 1);
  EXPECT_EQ(informer_->stats().decode_errors, 0);
}

TEST_F(InformerTest, DroppedWatchesResumeWithoutLossOrDuplicates) {
  informer_->Start();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  ASSERT_TRUE(Eventually([&] { return sim_->store().WatchCount() == 1; }));
  auto expected = Churn("d", 15, [&](int step) {
    if (step % 4 != 0) return;
    // Drop the watch and let the informer come back before the next writes.
    const int watches = informer_->stats().watches;
    sim_->DropWatches();
    ASSERT_TRUE(Eventually([&] { return informer_->stats().watches > watches && sim_->store().WatchCount() == 1; }));
  });
  ASSERT_TRUE(Eventually([&] { return seen_.size() >= expected.size() && CacheState() == ServerState(); }));
  EXPECT_EQ(seen_.Keys(), expected);
  EXPECT_EQ(informer_->stats().lists, 1);  // resumed from the resourceVersion, never relisted
  EXPECT_GE(informer_->stats().watches, 3);
}

TEST_F(InformerTest, ExpiredResourceVersionLeadsToARelistThatMatchesTheServer) {
  informer_->Start();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  Churn("before", 4);
  ASSERT_TRUE(Eventually([&] { return CacheState() == ServerState(); }));
  // Keep the informer off the server while history moves on, then forget it.
  sim_->AddFault({"watch", "sandboxes", 503, 0, false, "", -1});
  sim_->DropWatches();
  ASSERT_TRUE(Eventually([&] { return informer_->stats().watch_errors >= 1; }))
      << "watches " << informer_->stats().watches << " lists " << informer_->stats().lists << " open "
      << sim_->store().WatchCount();
  Churn("during", 6);
  sim_->store().Delete(*sim::FindKind("agents.x-k8s.io", "sandboxes"), "ns", "before1", std::nullopt, std::nullopt);
  sim_->ExpireHistory();
  sim_->ClearFaults();
  ASSERT_TRUE(Eventually([&] { return informer_->stats().expired >= 1 && CacheState() == ServerState(); }));
  EXPECT_GE(informer_->stats().lists, 2);
  // A deletion that happened while away is reported by the relist.
  const auto keys = seen_.Keys();
  EXPECT_TRUE(std::any_of(keys.begin(), keys.end(), [](const std::string& k) { return k.rfind("D before1@", 0) == 0; }));
}

TEST_F(InformerTest, GarbageOnTheWatchStreamIsSkippedAndCounted) {
  informer_->Start();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  ASSERT_TRUE(Eventually([&] { return sim_->store().WatchCount() == 1; }));
  sim_->InjectWatchLine("this is not json {");
  sim_->InjectWatchLine(R"({"type":"MODIFIED","object":{"metadata":{}}})");
  auto expected = Churn("g", 3);
  ASSERT_TRUE(Eventually([&] { return seen_.size() >= expected.size(); }));
  EXPECT_EQ(seen_.Keys(), expected);
  EXPECT_EQ(informer_->stats().decode_errors, 2);
  EXPECT_EQ(informer_->stats().lists, 1);
}

TEST_F(InformerTest, TruncatedListAndFailingWatchesAreRetried) {
  ManualTimeSource waits;  // records the informer's backoffs
  io_.time = &waits;
  informer_ = std::make_unique<Informer>(*client_, ResourceRef{"agents.x-k8s.io", "v1beta1", "sandboxes", true}, io_);
  sim_->AddFault({"list", "sandboxes", 200, 0, false, R"({"kind":"SandboxList","items":[{"metad)", 1});
  sim_->AddFault({"watch", "sandboxes", 429, 4, false, "", 1});
  ASSERT_TRUE(client_->Send("POST", kSandboxes, SandboxJson("pre"), "application/json").ok());
  informer_->Start();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  EXPECT_EQ(informer_->stats().lists, 2);
  EXPECT_EQ(informer_->stats().decode_errors, 1);
  auto expected = Churn("t", 2);
  ASSERT_TRUE(Eventually([&] { return CacheState() == ServerState(); }));
  EXPECT_EQ(informer_->stats().watch_errors, 1);
  ASSERT_EQ(waits.sleeps().size(), 2u);            // one backoff after the bad list...
  EXPECT_EQ(waits.sleeps().at(1), 4000ms);         // ...and the watch's Retry-After, honoured
}

TEST_F(InformerTest, BookmarksAdvanceTheResourceVersion) {
  client_.reset();
  server_.reset();
  sim::SimOptions fast;
  fast.emulate_agent_sandbox = false;
  fast.bookmark_interval = 20ms;
  StartServer({}, fast);
  Client();
  informer_ = std::make_unique<Informer>(*client_, ResourceRef{"agents.x-k8s.io", "v1beta1", "sandboxes", true}, io_);
  informer_->Start();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  // A change to another kind moves the global resourceVersion; only a bookmark can tell the sandbox informer.
  sim_->store().Create(*sim::FindKind("", "pods"), "ns", json::parse(R"({"metadata":{"name":"p"}})"));
  const std::string now = std::to_string(sim_->store().CurrentResourceVersion());
  EXPECT_TRUE(Eventually([&] { return informer_->stats().resource_version == now; }));
}

// ---- configuration --------------------------------------------------------------

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
  auto expect_error = [&](const std::string& yaml, const std::string& context, const std::string& fragment) {
    testing::WriteBytes(path, yaml);
    auto r = LoadKubeconfig(path, context);
    ASSERT_FALSE(r.ok()) << yaml;
    EXPECT_NE(r.status().message().find(path), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(fragment), std::string::npos) << r.status().message();
  };
  const std::string base = "clusters: [{name: c, cluster: {server: 'https://x'}}]\nusers: [{name: u, user: {}}]\n"
                           "contexts: [{name: ctx, context: {cluster: c, user: u}}]\n";
  expect_error(base, "missing", "context 'missing' not found (contexts: ctx)");
  expect_error(base, "", "no current-context is set");
  expect_error("clusters: [}", "", "not valid YAML");
  expect_error("clusters: [{name: c, cluster: {}}]\ncontexts: [{name: ctx, context: {cluster: c}}]\n", "ctx",
               "clusters[c].cluster.server is missing");
  expect_error("clusters: [{name: c, cluster: {server: 'ftp://x'}}]\ncontexts: [{name: ctx, context: {cluster: c}}]\n",
               "ctx", "must start with http:// or https://");
  expect_error("clusters: [{name: c, cluster: {server: 'https://x', certificate-authority-data: '!!!'}}]\n"
               "contexts: [{name: ctx, context: {cluster: c}}]\n", "ctx", "certificate-authority-data is not valid base64");
  testing::WriteBytes(path, "clusters: [{name: c, cluster: {server: 'https://x'}}]\n"
                            "users: [{name: u, user: {tokenFile: /no/such/token}}]\n"
                            "contexts: [{name: ctx, context: {cluster: c, user: u}}]\n");
  auto missing_token = LoadKubeconfig(path, "ctx");
  ASSERT_FALSE(missing_token.ok());
  EXPECT_NE(missing_token.status().message().find("users[u].user.tokenFile"), std::string::npos);
  EXPECT_FALSE(LoadKubeconfig(dir.File("absent")).ok());
}

TEST(ClusterConfigResolution, FollowsTheDesignOrder) {
  testing::TempDir dir;
  const std::string kc = "clusters: [{name: c, cluster: {server: 'http://from-file:1'}}]\n"
                         "contexts: [{name: ctx, context: {cluster: c}}]\ncurrent-context: ctx\n";
  testing::WriteBytes(dir.File("explicit"), kc);
  testing::WriteBytes(dir.File("env"), "clusters: [{name: c, cluster: {server: 'http://from-env:1'}}]\n"
                                       "contexts: [{name: ctx, context: {cluster: c}}]\ncurrent-context: ctx\n");
  std::filesystem::create_directories(dir.File("home/.kube"));
  testing::WriteBytes(dir.File("home/.kube/config"), "clusters: [{name: c, cluster: {server: 'http://from-home:1'}}]\n"
                                                     "contexts: [{name: ctx, context: {cluster: c}}]\ncurrent-context: ctx\n");
  std::filesystem::create_directories(dir.File("sa"));
  testing::WriteBytes(dir.File("sa/token"), "sa-token");
  testing::WriteBytes(dir.File("sa/ca.crt"), "SA-CA");
  testing::WriteBytes(dir.File("sa/namespace"), "fencekeeper-system\n");
  std::map<std::string, std::string> env{{"KUBECONFIG", dir.File("env")}, {"KUBERNETES_SERVICE_HOST", "10.0.0.1"},
                                         {"KUBERNETES_SERVICE_PORT", "443"}, {"HOME", dir.File("home")}};
  Getenv getenv = [&](const std::string& k) -> std::optional<std::string> {
    auto it = env.find(k);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  EXPECT_EQ(ResolveConfig(dir.File("explicit"), "", getenv, dir.File("sa"))->server, "http://from-file:1");
  EXPECT_EQ(ResolveConfig(std::nullopt, "", getenv, dir.File("sa"))->server, "http://from-env:1");
  env.erase("KUBECONFIG");
  auto in_cluster = ResolveConfig(std::nullopt, "", getenv, dir.File("sa"));
  ASSERT_TRUE(in_cluster.ok());
  EXPECT_EQ(in_cluster->server, "https://10.0.0.1:443");
  EXPECT_EQ(in_cluster->token_file, dir.File("sa/token"));
  EXPECT_EQ(in_cluster->ca_pem, "SA-CA");
  EXPECT_EQ(in_cluster->default_namespace, "fencekeeper-system");
  env["KUBERNETES_SERVICE_HOST"] = "fd00::1";
  EXPECT_EQ(ResolveConfig(std::nullopt, "", getenv, dir.File("sa"))->server, "https://[fd00::1]:443");
  env.erase("KUBERNETES_SERVICE_HOST");
  EXPECT_EQ(ResolveConfig(std::nullopt, "", getenv, dir.File("sa"))->server, "http://from-home:1");
}

TEST(ApiStatus, DecodesStatusObjectsAndPlainBodies) {
  ApiError conflict = DecodeStatus(409, R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","message":"modified","code":409})");
  EXPECT_EQ(conflict.kind, ApiErrorKind::kConflict);
  EXPECT_EQ(DecodeStatus(409, R"({"kind":"Status","reason":"AlreadyExists"})").kind, ApiErrorKind::kAlreadyExists);
  ApiError truncated = DecodeStatus(503, R"({"kind":"Sta)");
  EXPECT_EQ(truncated.kind, ApiErrorKind::kServerError);
  EXPECT_EQ(truncated.message, R"({"kind":"Sta)");
  ApiError in_watch = DecodeStatus(200, R"({"kind":"Status","reason":"Expired","code":410,"message":"too old"})");
  EXPECT_EQ(in_watch.kind, ApiErrorKind::kExpired);
  EXPECT_EQ(DecodeStatus(429, R"({"kind":"Status","reason":"TooManyRequests","details":{"retryAfterSeconds":7}})").retry_after_seconds, 7);
}

}  // namespace
}  // namespace fk::kube
