// The Kubernetes client (kube/client.h) against the simulator over real
// sockets: typed errors, retries of reads honouring Retry-After, writes sent
// once, deadlines, backoff, TLS, bearer tokens, client certificates, token
// rotation and discovery; over a FakeTransport: what it sends and when it
// re-sends; against a server that never answers: one warning per outage.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <atomic>
#include <boost/json.hpp>
#include <sstream>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "client_fixture.h"
#include "fake_transport.h"
#include "hanging_server.h"
#include "kube/client.h"
#include "sim/server.h"
#include "sim/simulator.h"
#include "test_support.h"
#include "tls_util.h"

namespace fk::kube {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

using fk::testing::ClientTest;
using fk::testing::kSandboxes;

ApiErrorKind KindOf(const ApiResult& r) { return ApiErrorOf(r.status()).kind; }

TEST_F(ClientTest, CreateGetPatchAndTypedErrors) {
  StartServer();
  ApiClient& c = Client();
  ApiResult created = c.Send("POST", kSandboxes, SandboxJson("a"), "application/json");
  ASSERT_TRUE(created.ok()) << created.status().message();
  EXPECT_EQ(HttpCode(created), 201);
  // The agent-sandbox emulation has written status since; patch against what is there now.
  ApiResult current = c.Get(kSandboxes + "/a");
  ASSERT_TRUE(current.ok());
  const std::string rv(json::parse(current->body).at("metadata").at("resourceVersion").as_string());

  ApiResult missing = c.Get(kSandboxes + "/nope");
  EXPECT_EQ(ApiErrorOf(missing.status()).kind, ApiErrorKind::kNotFound);
  EXPECT_EQ(ApiErrorOf(missing.status()).reason, "NotFound");
  EXPECT_NE(ApiErrorOf(missing.status()).message.find("\"nope\" not found"), std::string::npos);

  ApiResult patched =
      c.MergePatch(kSandboxes + "/a", R"({"metadata":{"resourceVersion":")" + rv +
                                          R"("},"spec":{"operatingMode":"Suspended"}})");
  ASSERT_TRUE(patched.ok()) << patched.status().message();
  EXPECT_EQ(json::parse(patched->body).at("metadata").at("generation"), 2);

  // The same conditional patch again carries a stale resourceVersion: 409, never retried.
  ApiResult stale =
      c.MergePatch(kSandboxes + "/a", R"({"metadata":{"resourceVersion":")" + rv +
                                          R"("},"spec":{"operatingMode":"Running"}})");
  EXPECT_EQ(ApiErrorOf(stale.status()).kind, ApiErrorKind::kConflict);
  EXPECT_EQ(HttpCode(stale), 409);
  EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"), 2);
  EXPECT_TRUE(time_.sleeps().empty());

  EXPECT_EQ(KindOf(c.Send("POST", kSandboxes, SandboxJson("a"), "application/json")),
            ApiErrorKind::kAlreadyExists);
  ApiResult invalid = c.Send("PUT", kSandboxes + "/a", SandboxJson("a"), "application/json");
  EXPECT_EQ(ApiErrorOf(invalid.status()).kind, ApiErrorKind::kInvalid);
  ApiResult media =
      c.Send("PATCH", kSandboxes + "/a", "{}", "application/strategic-merge-patch+json");
  EXPECT_EQ(ApiErrorOf(media.status()).kind, ApiErrorKind::kUnsupportedMedia);
  ApiResult json_patch = c.Send("PATCH", kSandboxes + "/a",
                                R"([{"op":"test","path":"/spec/operatingMode","value":"Running"}])",
                                "application/json-patch+json");
  EXPECT_EQ(HttpCode(json_patch), 422);
}

TEST_F(ClientTest, TooManyRequestsHonoursRetryAfter) {
  StartServer();
  ApiClient& c = Client();
  sim_->AddFault({"list", "sandboxes", 429, 3, false, "", 1});
  ApiResult r = c.Get(kSandboxes);
  ASSERT_TRUE(r.ok()) << r.status().message();
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
  ASSERT_TRUE(c.Send("POST", kSandboxes, SandboxJson("a"), "application/json").ok());
  ApiResult r = c.Get(kSandboxes + "/a");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(time_.sleeps().size(), 3u);
  EXPECT_GE(time_.sleeps().at(0), 100ms);
  EXPECT_LT(time_.sleeps().at(0), 200ms);
  EXPECT_GE(time_.sleeps().at(1), 200ms);
  EXPECT_LT(time_.sleeps().at(1), 400ms);
  EXPECT_GE(time_.sleeps().at(2), 400ms);
  EXPECT_EQ(sim_->RequestCount("get", "sandboxes"), 4);

  sim_->AddFault({"get", "sandboxes", 500, 0, false, "", -1});
  ApiResult exhausted = c.Get(kSandboxes + "/a");
  EXPECT_EQ(ApiErrorOf(exhausted.status()).kind, ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("get", "sandboxes"), 4 + 1 + o.max_retries);
}

// docs/design.md#lost-answers-and-conflicts: a write whose answer is an error may have
// been applied; the client hands the error to its caller and sends nothing more.
TEST_F(ClientTest, WritesAreSentOnceWhateverTheError) {
  StartServer();
  ApiClient& c = Client();
  ASSERT_TRUE(c.Send("POST", kSandboxes, SandboxJson("a"), "application/json").ok());
  const std::string patch = R"({"spec":{"operatingMode":"Suspended"}})";

  sim_->AddFault({"patch", "sandboxes", 503, 0, false, "", 1});
  ApiResult unavailable = c.MergePatch(kSandboxes + "/a", patch);
  EXPECT_EQ(ApiErrorOf(unavailable.status()).kind, ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"), 1);

  sim_->AddFault({"patch", "sandboxes", 429, 1, false, "", 1});
  ApiResult throttled = c.MergePatch(kSandboxes + "/a", patch);
  EXPECT_EQ(ApiErrorOf(throttled.status()).kind, ApiErrorKind::kTooManyRequests);
  EXPECT_EQ(ApiErrorOf(throttled.status()).retry_after_seconds, 1);  // the caller may honour it
  EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"), 2);

  sim_->AddFault({"create", "sandboxes", 503, 0, false, "", 1});
  EXPECT_EQ(KindOf(c.Send("POST", kSandboxes, SandboxJson("b"), "application/json")),
            ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("create", "sandboxes"), 2);  // "a" above, and "b" once

  sim_->AddFault({"update", "sandboxes", 500, 0, false, "", 1});
  EXPECT_EQ(KindOf(c.Send("PUT", kSandboxes + "/a", SandboxJson("a"), "application/json")),
            ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("update", "sandboxes"), 1);

  sim_->AddFault({"delete", "sandboxes", 503, 0, false, "", 1});
  EXPECT_EQ(KindOf(c.Send("DELETE", kSandboxes + "/a")), ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("delete", "sandboxes"), 1);

  EXPECT_TRUE(time_.sleeps().empty());  // no retry was even waited for
  // The faults are used up: the same patch now lands.
  EXPECT_TRUE(c.MergePatch(kSandboxes + "/a", patch).ok());
}

// A failed call is one Status: its code says what to do in general, and it
// carries the ApiError for the callers that branch on the kind.
TEST_F(ClientTest, AFailedCallIsAStatusWithTheHouseCodeAndItsApiError) {
  StartServer();
  ApiClient& c = Client();
  ASSERT_TRUE(c.Send("POST", kSandboxes, SandboxJson("a"), "application/json").ok());
  const ApiResult missing = c.Get(kSandboxes + "/nope");
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_EQ(ApiErrorOf(missing.status()).code, 404);
  const ApiResult exists = c.Send("POST", kSandboxes, SandboxJson("a"), "application/json");
  EXPECT_EQ(exists.status().code(), Code::kConflict);
  EXPECT_EQ(KindOf(exists), ApiErrorKind::kAlreadyExists);
  EXPECT_EQ(exists.status().message(), ApiErrorOf(exists.status()).ToString());
  Interrupt cancel;
  cancel.Fire();
  const ApiResult cancelled = c.Get(kSandboxes, {std::nullopt, &cancel});
  EXPECT_EQ(cancelled.status().code(), Code::kCancelled);
  EXPECT_EQ(KindOf(cancelled), ApiErrorKind::kTransport);
  c.Stop();
  EXPECT_EQ(c.Get(kSandboxes).status().code(), Code::kCancelled);
  config_.server = "http://127.0.0.1:1";  // nothing listens there
  ClientOptions once;
  once.max_retries = 0;
  const ApiResult unanswered = Client(once).Get(kSandboxes);
  EXPECT_EQ(unanswered.status().code(), Code::kUnavailable);
  EXPECT_EQ(HttpCode(unanswered), 0);
}

TEST_F(ClientTest, AWriteWithoutAnAnswerIsNotResentButAReadIs) {
  StartServer();
  config_.server = "http://127.0.0.1:1";  // nothing listens there
  ApiClient& c = Client();
  EXPECT_EQ(KindOf(c.MergePatch(kSandboxes + "/a", "{}")), ApiErrorKind::kTransport);
  EXPECT_EQ(KindOf(c.Send("POST", kSandboxes, SandboxJson("a"), "application/json")),
            ApiErrorKind::kTransport);
  EXPECT_EQ(KindOf(c.Get(kSandboxes)), ApiErrorKind::kTransport);
  const auto counts = c.RequestCounts();
  EXPECT_EQ(counts.at("PATCH 0"), 1);
  EXPECT_EQ(counts.at("POST 0"), 1);
  EXPECT_EQ(counts.at("GET 0"), 1 + ClientOptions{}.max_retries);
}

TEST_F(ClientTest, RetryAfterIsCappedAtAMinute) {
  StartServer();
  ApiClient& c = Client();
  sim_->AddFault({"list", "sandboxes", 429, 3600, false, "", 1});
  ASSERT_TRUE(c.Get(kSandboxes).ok());
  EXPECT_EQ(time_.sleeps(), std::vector<std::chrono::milliseconds>{60s});
}

TEST_F(ClientTest, ADeadlineEndsRetriesWithTheLastError) {
  StartServer();
  ClientOptions o;
  o.initial_backoff = 1s;
  o.max_retries = 10;
  ApiClient& c = Client(o);
  sim_->AddFault({"list", "sandboxes", 503, 0, false, "", -1});
  const MonoTime start = time_.MonotonicNow();
  ApiResult r = c.Get(kSandboxes, {start + 2500ms, nullptr});
  EXPECT_EQ(ApiErrorOf(r.status()).kind, ApiErrorKind::kServerError);
  EXPECT_LT(time_.MonotonicNow() - start, 2500ms);  // no wait ended past the deadline
  // The first wait (1-2 s) ends before it; the second (2-4 s more) would not.
  EXPECT_EQ(time_.sleeps().size(), 1u);
  EXPECT_EQ(sim_->RequestCount("list", "sandboxes"), 2);
  // A deadline already past sends nothing.
  ApiResult late = c.Get(kSandboxes, {time_.MonotonicNow(), nullptr});
  EXPECT_EQ(ApiErrorOf(late.status()).kind, ApiErrorKind::kTransport);
  EXPECT_NE(ApiErrorOf(late.status()).message.find("deadline"), std::string::npos)
      << ApiErrorOf(late.status()).message;
  EXPECT_EQ(sim_->RequestCount("list", "sandboxes"), 2);
}

TEST_F(ClientTest, TransportErrorsAreClear) {
  StartServer();
  config_.server = "http://127.0.0.1:1";  // nothing listens there
  ClientOptions o;
  o.max_retries = 1;
  ApiResult r = Client(o).Get("/api");
  EXPECT_EQ(ApiErrorOf(r.status()).kind, ApiErrorKind::kTransport);
  EXPECT_NE(ApiErrorOf(r.status()).message.find("cannot connect to 127.0.0.1:1"), std::string::npos)
      << ApiErrorOf(r.status()).message;
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
  EXPECT_EQ(*v, domain::ApiVersion::kV1beta1);
  client_.reset();
  server_.reset();
  sim::SimOptions old;
  old.serve_sandbox_v1beta1 = false;
  StartServer({}, old);
  auto fallback = Client().DiscoverSandboxVersion();
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(*fallback, domain::ApiVersion::kV1alpha1);
  ApiResult alpha =
      client_->Send("POST", "/apis/agents.x-k8s.io/v1alpha1/namespaces/ns/sandboxes",
                    R"({"metadata":{"name":"x"},"spec":{"replicas":0}})", "application/json");
  ASSERT_TRUE(alpha.ok()) << alpha.status().message();
  EXPECT_EQ(json::parse(alpha->body).at("spec").at("replicas"), 0);
  EXPECT_EQ(KindOf(client_->Get(kSandboxes)), ApiErrorKind::kNotFound);  // v1beta1 is not served
}

TEST_F(ClientTest, SeveralMebibyteObjectsRoundTrip) {
  StartServer();
  ApiClient& c = Client();
  const std::string big(5 << 20, 'x');
  ApiResult created =
      c.Send("POST", kSandboxes, SandboxJson("big", R"(,"annotations":{"blob":")" + big + R"("})"),
             "application/json");
  ASSERT_TRUE(created.ok()) << created.status().message();
  ApiResult got = c.Get(kSandboxes + "/big");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(json::parse(got->body).at("metadata").at("annotations").at("blob").as_string().size(),
            big.size());
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
  ApiResult wrong = Client(o).Get("/api");
  EXPECT_EQ(ApiErrorOf(wrong.status()).kind, ApiErrorKind::kTransport);
  EXPECT_NE(ApiErrorOf(wrong.status()).message.find("certificate verify failed"), std::string::npos)
      << ApiErrorOf(wrong.status()).message;

  config_.insecure_skip_tls_verify = true;
  EXPECT_TRUE(Client().Get("/api").ok());

  config_.insecure_skip_tls_verify = false;
  config_.ca_pem = "not a certificate";
  auto bad = ApiClient::Create(config_);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("certificate authority is not valid PEM"),
            std::string::npos);
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
  EXPECT_EQ(KindOf(Client(o).Get("/api")), ApiErrorKind::kUnauthorized);
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

// `fencekeeper sim --tls-cert … --token … --write-kubeconfig` writes a
// kubeconfig a client uses as it is: it trusts the chain served and sends the
// token (one with YAML's special characters in it). It is readable by its
// owner only (kubectl creates kubeconfigs 0600), even where a 0644 file was.
TEST_F(ClientTest, TheSimulatorsKubeconfigTrustsItsCertificateAndSendsItsToken) {
  const auto pki = testing::MakeTestPki();
  sim::ServerOptions so;
  so.tls_cert_pem = pki.server_cert + pki.ca_cert;  // the leaf, then its CA
  so.tls_key_pem = pki.server_key;
  so.bearer_token = "s3: #cret'\"";
  StartServer(so);
  testing::TempDir dir;
  const std::string path = dir.File("kubeconfig");
  testing::WriteBytes(path, "an old kubeconfig");
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  ASSERT_TRUE(sim::WriteKubeconfig(path, {config_.server, so.tls_cert_pem, *so.bearer_token}).ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  auto config = LoadKubeconfig(path);
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  auto client = ApiClient::Create(*config);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  ApiResult api = (*client)->Get("/api");
  EXPECT_TRUE(api.ok()) << api.status().ToString();
  EXPECT_EQ(server_->AuthCount("token"), 1);
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

// ---- the client over a FakeTransport ---------------------------------------------

TEST(FakeTransportClient, RecordsEveryRequestAndBoundsItsTimeoutByTheDeadline) {
  ManualTimeSource time;
  auto transport =
      std::make_unique<FakeTransport>([](const HttpRequest& r) -> Result<HttpResponse> {
        if (r.method == "GET")
          return HttpResponse{200, R"({"kind":"Sandbox"})", "application/json", {}};
        return HttpResponse{
            409, R"({"kind":"Status","reason":"Conflict","code":409})", "application/json", {}};
      });
  FakeTransport& fake = *transport;
  ClusterConfig config;
  config.token = "t0k3n";
  ClientOptions o;
  o.time = &time;
  auto client = ApiClient::CreateWithTransport(config, o, std::move(transport));
  ASSERT_TRUE(client->Get(kSandboxes + "/a").ok());
  ApiResult conflict = client->MergePatch(kSandboxes + "/a", R"({"spec":{}})",
                                          {time.MonotonicNow() + 1500ms, nullptr});
  EXPECT_EQ(ApiErrorOf(conflict.status()).kind, ApiErrorKind::kConflict);

  const auto requests = fake.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].target, kSandboxes + "/a");
  EXPECT_EQ(requests[0].timeout, o.request_timeout);
  EXPECT_EQ(requests[1].method, "PATCH");
  EXPECT_EQ(requests[1].body, R"({"spec":{}})");
  EXPECT_EQ(requests[1].content_type, "application/merge-patch+json");
  EXPECT_EQ(requests[1].timeout, 1500ms);
  EXPECT_EQ(requests[1].headers,
            (std::vector<std::pair<std::string, std::string>>{{"Authorization", "Bearer t0k3n"}}));
  EXPECT_EQ(fake.Count("PATCH"), 1);
  EXPECT_EQ(fake.host(), "fake.invalid");

  // Without a stream handler a watch ends at once, with an error.
  std::optional<Status> ended;
  auto stream = client->OpenStream(
      kSandboxes + "?watch=true",
      {[](std::string_view) {}, [&](const Status& s, std::optional<HttpResponse>) { ended = s; }});
  ASSERT_TRUE(ended.has_value());
  EXPECT_FALSE(ended->ok());
  EXPECT_TRUE(fake.requests().back().stream);
}

// The one write that goes twice: a 401 means the server refused it before
// processing it, and a token file may just have rotated.
TEST(FakeTransportClient, AWriteRefusedWith401IsSentOnceMoreWithTheReReadToken) {
  testing::TempDir dir;
  testing::WriteBytes(dir.File("token"), "old\n");
  ManualTimeSource time;
  auto transport =
      std::make_unique<FakeTransport>([&](const HttpRequest& r) -> Result<HttpResponse> {
        if (r.headers.at(0).second != "Bearer new")
          return HttpResponse{401, R"({"kind":"Status","code":401})", "", {}};
        return HttpResponse{200, "{}", "application/json", {}};
      });
  FakeTransport& fake = *transport;
  ClusterConfig config;
  config.token_file = dir.File("token");
  ClientOptions o;
  o.time = &time;
  auto client = ApiClient::CreateWithTransport(config, o, std::move(transport));
  client->ReloadToken();  // "old"
  testing::WriteBytes(dir.File("token"), "new\n");
  EXPECT_TRUE(client->MergePatch(kSandboxes + "/a", "{}").ok());
  EXPECT_EQ(fake.Count("PATCH"), 2);
  // A 401 that persists is not sent a third time.
  testing::WriteBytes(dir.File("token"), "wrong\n");
  time.Advance(61s);
  EXPECT_EQ(KindOf(client->MergePatch(kSandboxes + "/a", "{}")), ApiErrorKind::kUnauthorized);
  EXPECT_EQ(fake.Count("PATCH"), 4);
}

TEST(FakeTransportClient, AnAnswerOverTheBodyLimitIsTooLargeAndNotRetried) {
  auto t = std::make_unique<FakeTransport>([](const HttpRequest&) -> Result<HttpResponse> {
    return HttpResponse{200, std::string(100, 'x'), "application/json", std::nullopt};
  });
  FakeTransport* fake = t.get();
  fake->SetMaxBodyBytes(99);
  ClientOptions co;
  co.max_retries = 3;
  auto client = ApiClient::CreateWithTransport({}, co, std::move(t));
  const ApiResult r = client->Get("/api/v1/pods");
  EXPECT_EQ(ApiErrorOf(r.status()).kind, ApiErrorKind::kTooLarge);
  EXPECT_EQ(HttpCode(r), 200);
  EXPECT_EQ(fake->Count("GET"), 1);  // as large again if sent again
}

// ---- a server that never answers (issue 9) ----------------------------------

// Loud once per outage, early: the client warns when the first request gets
// no answer (not after a whole call's retries: 128 s in issue 9), once, and
// says when the server answers again.
TEST(HungServer, TheFirstRequestWithoutAnAnswerIsAWarningOncePerOutage) {
  std::ostringstream out;
  struct Restore {  // even when an assertion returns early: `out` dies with us
    std::shared_ptr<spdlog::logger> previous = spdlog::default_logger();
    ~Restore() { spdlog::set_default_logger(previous); }
  } restore;
  auto logger = std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(out));
  logger->set_pattern("%l %v");
  spdlog::set_default_logger(logger);
  std::atomic<bool> answer{false};
  testing::HangingServer server([&](const testing::HangingRequest&) {
    return answer ? std::optional<testing::HangingReply>(
                        testing::HangingReply{200, "{}", "application/json", "", {}})
                  : std::nullopt;
  });
  ClusterConfig cluster;
  cluster.server = server.url();
  ManualTimeSource time;
  ClientOptions o;
  o.time = &time;
  o.request_timeout = 200ms;
  o.max_retries = 0;
  auto client = ApiClient::Create(cluster, o);
  ASSERT_TRUE(client.ok());
  auto warnings = [&] {
    std::istringstream in(out.str());
    int n = 0;
    for (std::string line; std::getline(in, line);)
      n += line.rfind("warning ", 0) == 0 && line.find("is not answering") != std::string::npos;
    return n;
  };
  EXPECT_EQ(KindOf((*client)->Get("/api")), ApiErrorKind::kTransport);
  EXPECT_EQ(warnings(), 1);  // after one request timeout
  EXPECT_EQ(KindOf((*client)->Get("/api")), ApiErrorKind::kTransport);
  EXPECT_EQ(warnings(), 1);  // the same outage
  answer = true;
  EXPECT_TRUE((*client)->Get("/api").ok());
  EXPECT_NE(out.str().find("answers again"), std::string::npos) << out.str();
}

}  // namespace
}  // namespace fk::kube
