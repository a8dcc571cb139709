// The Kubernetes client against the simulator over real sockets: typed
// errors, retries of reads honouring Retry-After, writes sent once, deadlines,
// backoff, TLS, bearer tokens, client certificates, token rotation,
// discovery, and informers that see every change exactly once through
// dropped watches, 410s and garbage. The transport against a bare socket
// server, and the client over a FakeTransport.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <boost/json.hpp>
#include <condition_variable>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "common/version.h"
#include "hanging_server.h"
#include "kube/client.h"
#include "kube/config.h"
#include "kube/fake_transport.h"
#include "kube/http_transport.h"
#include "kube/informer.h"
#include "kube/objects.h"
#include "map_cache.h"
#include "reconciler/controller.h"
#include "sim/scenario.h"
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
    return R"({"apiVersion":"agents.x-k8s.io/v1beta1","kind":"Sandbox","metadata":{"name":")" +
           name + R"(","namespace":"ns")" + extra + R"(},"spec":{"operatingMode":"Running"}})";
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

  ApiResponse patched =
      c.MergePatch(kSandboxes + "/a", R"({"metadata":{"resourceVersion":")" + rv +
                                          R"("},"spec":{"operatingMode":"Suspended"}})");
  ASSERT_TRUE(patched.ok()) << patched.error.ToString();
  EXPECT_EQ(json::parse(patched.body).at("metadata").at("generation"), 2);

  // The same conditional patch again carries a stale resourceVersion: 409, never retried.
  ApiResponse stale =
      c.MergePatch(kSandboxes + "/a", R"({"metadata":{"resourceVersion":")" + rv +
                                          R"("},"spec":{"operatingMode":"Running"}})");
  EXPECT_EQ(stale.error.kind, ApiErrorKind::kConflict);
  EXPECT_EQ(stale.status, 409);
  EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"), 2);
  EXPECT_TRUE(time_.sleeps().empty());

  EXPECT_EQ(c.Send("POST", kSandboxes, SandboxJson("a"), "application/json").error.kind,
            ApiErrorKind::kAlreadyExists);
  ApiResponse invalid = c.Send("PUT", kSandboxes + "/a", SandboxJson("a"), "application/json");
  EXPECT_EQ(invalid.error.kind, ApiErrorKind::kInvalid);
  ApiResponse media =
      c.Send("PATCH", kSandboxes + "/a", "{}", "application/strategic-merge-patch+json");
  EXPECT_EQ(media.error.kind, ApiErrorKind::kUnsupportedMedia);
  ApiResponse json_patch =
      c.Send("PATCH", kSandboxes + "/a",
             R"([{"op":"test","path":"/spec/operatingMode","value":"Running"}])",
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

// docs/design.md#lost-answers-and-conflicts: a write whose answer is an error may have
// been applied; the client hands the error to its caller and sends nothing more.
TEST_F(ClientTest, WritesAreSentOnceWhateverTheError) {
  StartServer();
  ApiClient& c = Client();
  ASSERT_TRUE(c.Send("POST", kSandboxes, SandboxJson("a"), "application/json").ok());
  const std::string patch = R"({"spec":{"operatingMode":"Suspended"}})";

  sim_->AddFault({"patch", "sandboxes", 503, 0, false, "", 1});
  ApiResponse unavailable = c.MergePatch(kSandboxes + "/a", patch);
  EXPECT_EQ(unavailable.error.kind, ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"), 1);

  sim_->AddFault({"patch", "sandboxes", 429, 1, false, "", 1});
  ApiResponse throttled = c.MergePatch(kSandboxes + "/a", patch);
  EXPECT_EQ(throttled.error.kind, ApiErrorKind::kTooManyRequests);
  EXPECT_EQ(throttled.error.retry_after_seconds, 1);  // the caller may honour it
  EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"), 2);

  sim_->AddFault({"create", "sandboxes", 503, 0, false, "", 1});
  EXPECT_EQ(c.Send("POST", kSandboxes, SandboxJson("b"), "application/json").error.kind,
            ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("create", "sandboxes"), 2);  // "a" above, and "b" once

  sim_->AddFault({"update", "sandboxes", 500, 0, false, "", 1});
  EXPECT_EQ(c.Send("PUT", kSandboxes + "/a", SandboxJson("a"), "application/json").error.kind,
            ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("update", "sandboxes"), 1);

  sim_->AddFault({"delete", "sandboxes", 503, 0, false, "", 1});
  EXPECT_EQ(c.Send("DELETE", kSandboxes + "/a").error.kind, ApiErrorKind::kServerError);
  EXPECT_EQ(sim_->RequestCount("delete", "sandboxes"), 1);

  EXPECT_TRUE(time_.sleeps().empty());  // no retry was even waited for
  // The faults are used up: the same patch now lands.
  EXPECT_TRUE(c.MergePatch(kSandboxes + "/a", patch).ok());
}

TEST_F(ClientTest, AWriteWithoutAnAnswerIsNotResentButAReadIs) {
  StartServer();
  config_.server = "http://127.0.0.1:1";  // nothing listens there
  ApiClient& c = Client();
  EXPECT_EQ(c.MergePatch(kSandboxes + "/a", "{}").error.kind, ApiErrorKind::kTransport);
  EXPECT_EQ(c.Send("POST", kSandboxes, SandboxJson("a"), "application/json").error.kind,
            ApiErrorKind::kTransport);
  EXPECT_EQ(c.Get(kSandboxes).error.kind, ApiErrorKind::kTransport);
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
  ApiResponse r = c.Get(kSandboxes, {start + 2500ms, nullptr});
  EXPECT_EQ(r.error.kind, ApiErrorKind::kServerError);
  EXPECT_LT(time_.MonotonicNow() - start, 2500ms);  // no wait ended past the deadline
  // The first wait (1-2 s) ends before it; the second (2-4 s more) would not.
  EXPECT_EQ(time_.sleeps().size(), 1u);
  EXPECT_EQ(sim_->RequestCount("list", "sandboxes"), 2);
  // A deadline already past sends nothing.
  ApiResponse late = c.Get(kSandboxes, {time_.MonotonicNow(), nullptr});
  EXPECT_EQ(late.error.kind, ApiErrorKind::kTransport);
  EXPECT_NE(late.error.message.find("deadline"), std::string::npos) << late.error.message;
  EXPECT_EQ(sim_->RequestCount("list", "sandboxes"), 2);
}

TEST_F(ClientTest, TransportErrorsAreClear) {
  StartServer();
  config_.server = "http://127.0.0.1:1";  // nothing listens there
  ClientOptions o;
  o.max_retries = 1;
  ApiResponse r = Client(o).Get("/api");
  EXPECT_EQ(r.error.kind, ApiErrorKind::kTransport);
  EXPECT_NE(r.error.message.find("cannot connect to 127.0.0.1:1"), std::string::npos)
      << r.error.message;
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
  ApiResponse alpha =
      client_->Send("POST", "/apis/agents.x-k8s.io/v1alpha1/namespaces/ns/sandboxes",
                    R"({"metadata":{"name":"x"},"spec":{"replicas":0}})", "application/json");
  ASSERT_TRUE(alpha.ok()) << alpha.error.ToString();
  EXPECT_EQ(json::parse(alpha.body).at("spec").at("replicas"), 0);
  EXPECT_EQ(client_->Get(kSandboxes).error.kind, ApiErrorKind::kNotFound);  // v1beta1 is not served
}

TEST_F(ClientTest, SeveralMebibyteObjectsRoundTrip) {
  StartServer();
  ApiClient& c = Client();
  const std::string big(5 << 20, 'x');
  ApiResponse created =
      c.Send("POST", kSandboxes, SandboxJson("big", R"(,"annotations":{"blob":")" + big + R"("})"),
             "application/json");
  ASSERT_TRUE(created.ok()) << created.error.ToString();
  ApiResponse got = c.Get(kSandboxes + "/big");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(json::parse(got.body).at("metadata").at("annotations").at("blob").as_string().size(),
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
  ApiResponse wrong = Client(o).Get("/api");
  EXPECT_EQ(wrong.error.kind, ApiErrorKind::kTransport);
  EXPECT_NE(wrong.error.message.find("certificate verify failed"), std::string::npos)
      << wrong.error.message;

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
  ApiResponse conflict = client->MergePatch(kSandboxes + "/a", R"({"spec":{}})",
                                            {time.MonotonicNow() + 1500ms, nullptr});
  EXPECT_EQ(conflict.error.kind, ApiErrorKind::kConflict);

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
  EXPECT_EQ(client->MergePatch(kSandboxes + "/a", "{}").error.kind, ApiErrorKind::kUnauthorized);
  EXPECT_EQ(fake.Count("PATCH"), 4);
}

// ---- the transport on a reused connection -----------------------------------------

// A bare HTTP/1.1 server on loopback that answers the first request on each
// connection (200, kept alive), and then:
enum class AfterTheAnswer {
  kReadAndClose,  // reads the next request and closes without answering: a
                  // server that took a request and died, or an idle timeout racing it
  kReadAndHang,   // reads the next request and never answers: a hung server
  kClose,         // closes the idle connection at once
};
class OneAnswerPerConnectionServer {
 public:
  explicit OneAnswerPerConnectionServer(AfterTheAnswer then = AfterTheAnswer::kReadAndClose)
      : then_(then) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), len) != 0 ||
        ::listen(listen_fd_, 8) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ADD_FAILURE() << "cannot listen on loopback";
    }
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~OneAnswerPerConnectionServer() {
    stop_ = true;
    thread_.join();
    ::close(listen_fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // "METHOD target" of every request received, in order.
  std::vector<std::string> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  int closed() const { return closed_; }
  std::string user_agent() {
    std::lock_guard lock(mu_);
    return user_agent_;
  }

 private:
  // Waits up to 10 ms for `fd` to be readable; false when stopping.
  bool Readable(int fd) {
    while (!stop_) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 10) > 0) return true;
    }
    return false;
  }
  bool ReadRequest(int fd) {
    std::string data;
    size_t header_end;
    char buf[4096];
    while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
      if (!Readable(fd)) return false;
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return false;
      data.append(buf, static_cast<size_t>(n));
    }
    size_t length = 0;
    std::string lower = data.substr(0, header_end);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    if (auto at = lower.find("content-length:"); at != std::string::npos)
      length = std::stoul(lower.substr(at + 15));
    while (data.size() < header_end + 4 + length) {
      if (!Readable(fd)) return false;
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) return false;
      data.append(buf, static_cast<size_t>(n));
    }
    const size_t sp1 = data.find(' '), sp2 = data.find(' ', sp1 + 1);
    std::lock_guard lock(mu_);
    seen_.push_back(data.substr(0, sp1) + " " + data.substr(sp1 + 1, sp2 - sp1 - 1));
    if (auto at = lower.find("\r\nuser-agent: "); at != std::string::npos) {
      at += 14;
      user_agent_ = data.substr(at, data.find("\r\n", at) - at);
    }
    return true;
  }
  void Serve() {
    while (Readable(listen_fd_)) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0) continue;
      if (ReadRequest(fd)) {
        const std::string answer =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
        if (::write(fd, answer.data(), answer.size()) < 0) ADD_FAILURE() << "write failed";
        if (then_ != AfterTheAnswer::kClose) ReadRequest(fd);  // received, never answered
        while (then_ == AfterTheAnswer::kReadAndHang && Readable(fd) &&
               ::read(fd, buf_, sizeof buf_) > 0) {
        }
      }
      ::close(fd);
      ++closed_;
    }
  }

  const AfterTheAnswer then_;
  char buf_[4096];
  std::atomic<int> closed_{0};
  int listen_fd_ = -1;
  uint16_t port_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> seen_;
  std::string user_agent_;
};

std::unique_ptr<HttpTransport> TransportTo(const std::string& url) {
  TransportConfig config;
  config.server = url;
  auto t = HttpTransport::Create(config);
  EXPECT_TRUE(t.ok());
  return std::move(*t);
}

TEST(Transport, AWriteOnAReusedConnectionTheServerClosedIsNotResent) {
  OneAnswerPerConnectionServer server;
  auto transport = TransportTo(server.url());
  ASSERT_TRUE(transport->RoundTrip({"GET", "/api", "", "", {}}, 10s).ok());
  auto patched =
      transport->RoundTrip({"PATCH", "/apis/x/a", "{}", "application/merge-patch+json", {}}, 10s);
  EXPECT_FALSE(patched.ok());  // the server may have applied it: the caller finds out by reading
  EXPECT_EQ(server.seen(), (std::vector<std::string>{"GET /api", "PATCH /apis/x/a"}));
}

TEST(Transport, TheUserAgentNamesTheVersionAndTheCommit) {
  OneAnswerPerConnectionServer server;
  auto transport = TransportTo(server.url());
  ASSERT_TRUE(transport->RoundTrip({"GET", "/api", "", "", {}}, 10s).ok());
  EXPECT_EQ(server.user_agent(), std::string("fencekeeper/") + FK_PROJECT_VERSION +
                                     " (linux/amd64) commit/" + fk::GitCommit());
}

TEST(Transport, AReadOnAReusedConnectionTheServerClosedIsResentOnANewOne) {
  OneAnswerPerConnectionServer server;
  auto transport = TransportTo(server.url());
  ASSERT_TRUE(transport->RoundTrip({"GET", "/api", "", "", {}}, 10s).ok());
  auto got = transport->RoundTrip({"GET", "/apis/x/a", "", "", {}}, 10s);
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->status, 200);
  EXPECT_EQ(server.seen(),
            (std::vector<std::string>{"GET /api", "GET /apis/x/a", "GET /apis/x/a"}));
}

TEST(Transport, AnIdleConnectionTheServerClosedIsNotUsedForAWrite) {
  OneAnswerPerConnectionServer server(AfterTheAnswer::kClose);
  auto transport = TransportTo(server.url());
  ASSERT_TRUE(transport->RoundTrip({"GET", "/api", "", "", {}}, 10s).ok());
  ASSERT_TRUE(Eventually([&] { return server.closed() == 1; }));
  // Seen closed before sending: the PATCH goes on a new connection, and lands.
  auto patched =
      transport->RoundTrip({"PATCH", "/apis/x/a", "{}", "application/merge-patch+json", {}}, 10s);
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ(server.seen(), (std::vector<std::string>{"GET /api", "PATCH /apis/x/a"}));
}

// An answer over the body limit (64 MiB by default; 1 byte here) is an
// answer, marked too large and without its body, and its connection is not
// reused (issue 17: the informer then asks for a smaller page).
TEST(Transport, AnAnswerOverTheBodyLimitIsMarkedAndItsConnectionNotReused) {
  OneAnswerPerConnectionServer server(AfterTheAnswer::kReadAndHang);
  TransportConfig config;
  config.server = server.url();
  config.max_body_bytes = 1;
  auto transport = HttpTransport::Create(config);
  ASSERT_TRUE(transport.ok());
  for (int i = 0; i < 2; ++i) {
    auto got = (*transport)->RoundTrip({"GET", "/api", "", "", {}}, 10s);
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->status, 200);
    EXPECT_TRUE(got->body_too_large);
    EXPECT_EQ(got->body, "");
  }
  // Each on a connection of its own: none went to the one left hanging.
  EXPECT_EQ(server.seen(), (std::vector<std::string>{"GET /api", "GET /api"}));
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
  const ApiResponse r = client->Get("/api/v1/pods");
  EXPECT_EQ(r.error.kind, ApiErrorKind::kTooLarge);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(fake->Count("GET"), 1);  // as large again if sent again
}

TEST(Transport, TheTimeoutBoundsTheWholeExchange) {
  OneAnswerPerConnectionServer server(AfterTheAnswer::kReadAndHang);
  auto transport = TransportTo(server.url());
  ASSERT_TRUE(transport->RoundTrip({"GET", "/api", "", "", {}}, 10s).ok());
  // The server reads the next request and sits on it. The read would be
  // re-sent on a new connection, but not once its time is up.
  const auto start = std::chrono::steady_clock::now();
  auto r = transport->RoundTrip({"GET", "/apis/x/a", "", "", {}}, 300ms);
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("reading the answer to GET /apis/x/a failed"),
            std::string::npos)
      << r.status().message();
  EXPECT_NE(r.status().message().find("timeout"), std::string::npos) << r.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // far below the 30 s default
  EXPECT_EQ(server.seen(), (std::vector<std::string>{"GET /api", "GET /apis/x/a"}));
}

// ---- a server that never answers (issue 9) ----------------------------------

// SIGTERM reaches a call in flight: a cancel abandons the exchange at once,
// whatever stage it is in, and a call whose cancel has already fired does
// not even connect.
TEST(HungServer, ACancelAbandonsAnExchangeInFlight) {
  testing::HangingServer hung;
  auto transport = TransportTo(hung.url());
  Interrupt cancel;
  std::thread firer([&] {
    Eventually([&] { return hung.requests() >= 1; });
    cancel.Fire();
  });
  const auto start = std::chrono::steady_clock::now();
  auto r = transport->RoundTrip({"GET", "/api", "", "", {}}, 30s, &cancel);
  firer.join();
  EXPECT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("cancelled"), std::string::npos) << r.status().message();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);  // not the 30 s timeout
  const int connections = hung.connections();
  auto again = transport->RoundTrip({"GET", "/api", "", "", {}}, 30s, &cancel);
  EXPECT_FALSE(again.ok());
  EXPECT_EQ(hung.connections(), connections);
}

// The TLS handshake with a server that accepted and says nothing: a cancel
// ends it (before, only the 10 s connect timeout did, for streams too).
TEST(HungServer, ACancelEndsATlsHandshakeThatNeverCompletes) {
  testing::HangingServer hung;
  TransportConfig config;
  config.server = "https://127.0.0.1:" + hung.url().substr(hung.url().rfind(':') + 1);
  config.insecure_skip_tls_verify = true;
  auto transport = HttpTransport::Create(config);
  ASSERT_TRUE(transport.ok()) << transport.status().ToString();
  Interrupt cancel;
  std::thread firer([&] {
    Eventually([&] { return hung.connections() >= 1; });
    cancel.Fire();
  });
  const auto start = std::chrono::steady_clock::now();
  auto r = (*transport)->RoundTrip({"GET", "/api", "", "", {}}, 30s, &cancel);
  firer.join();
  EXPECT_FALSE(r.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);

  std::atomic<bool> ended{false};
  auto stream =
      (*transport)
          ->OpenStream({"GET", "/watch", "", "", {}},
                       {[](std::string_view) {},
                        [&](const Status&, std::optional<HttpResponse>) { ended = true; }});
  ASSERT_TRUE(Eventually([&] { return hung.connections() >= 2; }));
  const auto cancelled_at = std::chrono::steady_clock::now();
  stream->Cancel();
  ASSERT_TRUE(Eventually([&] { return ended.load(); }, 5s));
  EXPECT_LT(std::chrono::steady_clock::now() - cancelled_at, 5s);
}

// A watch that sends its header and then nothing at all — not even a
// bookmark — ends as failed after the idle timeout, so the informer resumes
// it; one that does not even send a header ends after the request timeout.
TEST(HungServer, ASilentWatchEndsAfterItsIdleTimeout) {
  testing::HangingServer server([](const testing::HangingRequest& r) {
    if (r.target != "/header-then-silence") return std::optional<testing::HangingReply>();
    testing::HangingReply reply;
    reply.raw =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: "
        "chunked\r\n\r\n";
    return std::optional<testing::HangingReply>(reply);
  });
  TransportConfig config;
  config.server = server.url();
  config.request_timeout = 300ms;
  config.stream_idle_timeout = 300ms;
  auto transport = HttpTransport::Create(config);
  ASSERT_TRUE(transport.ok());
  for (const std::string target : {"/header-then-silence", "/no-header"}) {
    std::mutex mu;
    std::optional<Status> end;
    auto stream = (*transport)
                      ->OpenStream({"GET", target, "", "", {}},
                                   {[](std::string_view) {},
                                    [&](const Status& s, std::optional<HttpResponse>) {
                                      std::lock_guard lock(mu);
                                      end = s;
                                    }});
    ASSERT_TRUE(Eventually(
        [&] {
          std::lock_guard lock(mu);
          return end.has_value();
        },
        10s))
        << target;
    std::lock_guard lock(mu);
    EXPECT_EQ(end->code(), Code::kIOError) << target << ": " << end->ToString();
  }
}

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
                        testing::HangingReply{200, "{}", "application/json", ""})
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
  EXPECT_EQ((*client)->Get("/api").error.kind, ApiErrorKind::kTransport);
  EXPECT_EQ(warnings(), 1);  // after one request timeout
  EXPECT_EQ((*client)->Get("/api").error.kind, ApiErrorKind::kTransport);
  EXPECT_EQ(warnings(), 1);  // the same outage
  answer = true;
  EXPECT_TRUE((*client)->Get("/api").ok());
  EXPECT_NE(out.str().find("answers again"), std::string::npos) << out.str();
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
      out.insert(std::string(c.type == ChangeType::kAdded      ? "A"
                             : c.type == ChangeType::kModified ? "M"
                                                               : "D") +
                 " " + c.name + "@" + c.resource_version);
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
    informer_ = std::make_unique<Informer>(
        *client_, ResourceRef{"agents.x-k8s.io", "v1beta1", "sandboxes", true}, io_);
    informer_->Subscribe([this](const Change& c) { seen_.Add(c); });
  }
  void TearDown() override {
    informer_.reset();
    ClientTest::TearDown();
  }
  // What the server holds, as "name@rv".
  std::set<std::string> ServerState() {
    std::set<std::string> out;
    auto l = sim_->store().List(*sim::FindKind("agents.x-k8s.io", "sandboxes"), "", sim::Selector(),
                                sim::Selector());
    for (const auto& o : l.items) {
      out.insert(std::string(o.at("metadata").at("name").as_string()) + "@" +
                 std::string(o.at("metadata").at("resourceVersion").as_string()));
    }
    return out;
  }
  std::set<std::string> CacheState() {
    std::set<std::string> out;
    for (const auto& cached : informer_->store().List()) {
      const json::value& o = *JsonOf(cached);
      out.insert(std::string(o.at("metadata").at("name").as_string()) + "@" +
                 std::string(o.at("metadata").at("resourceVersion").as_string()));
    }
    return out;
  }
  // Creates, relabels and deletes sandboxes, returning the change each write
  // should produce ("TYPE name@rv"). `between` runs after every write.
  std::multiset<std::string> Churn(const std::string& prefix, int n,
                                   const std::function<void(int)>& between = {}) {
    std::multiset<std::string> expected;
    auto& store = sim_->store();
    const auto* kind = sim::FindKind("agents.x-k8s.io", "sandboxes");
    int step = 0;
    auto rv = [](const sim::Outcome& o) {
      return std::string(o.object.at("metadata").at("resourceVersion").as_string());
    };
    for (int i = 0; i < n; ++i) {
      const std::string name = prefix + std::to_string(i);
      auto o = store.Create(*kind, "ns",
                            json::parse(R"({"metadata":{"name":")" + name +
                                        R"("},"spec":{"operatingMode":"Running"}})"));
      expected.insert("A " + name + "@" + rv(o));
      if (between) between(step++);
    }
    for (int i = 0; i < n; i += 2) {
      const std::string name = prefix + std::to_string(i);
      auto o = store.Mutate(
          *kind, "ns", name,
          [](json::value& v) -> std::optional<sim::ApiFailure> {
            v.at("metadata").as_object()["labels"] = {{"touched", "yes"}};
            return std::nullopt;
          },
          false);
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
  ManualTimeSource informer_time_;  // outlives informer_, whose thread may still be waiting on it
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
    // A drop can land before the server has registered a watch the informer
    // just opened (it then misses it: failed in CI); drop again each second
    // without progress. Extra drops only test more resumes.
    auto last_drop = std::chrono::steady_clock::now();
    ASSERT_TRUE(Eventually([&] {
      if (informer_->stats().watches > watches && sim_->store().WatchCount() == 1) return true;
      if (std::chrono::steady_clock::now() - last_drop > 1s) {
        sim_->DropWatches();
        last_drop = std::chrono::steady_clock::now();
      }
      return false;
    })) << "step "
        << step << ": watches " << informer_->stats().watches << " (were " << watches
        << "), watch errors " << informer_->stats().watch_errors << ", lists "
        << informer_->stats().lists << ", open on the server " << sim_->store().WatchCount();
  });
  ASSERT_TRUE(
      Eventually([&] { return seen_.size() >= expected.size() && CacheState() == ServerState(); }));
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
      << "watches " << informer_->stats().watches << " lists " << informer_->stats().lists
      << " open " << sim_->store().WatchCount();
  Churn("during", 6);
  sim_->store().Delete(*sim::FindKind("agents.x-k8s.io", "sandboxes"), "ns", "before1",
                       std::nullopt, std::nullopt);
  sim_->ExpireHistory();
  sim_->ClearFaults();
  ASSERT_TRUE(
      Eventually([&] { return informer_->stats().expired >= 1 && CacheState() == ServerState(); }));
  EXPECT_GE(informer_->stats().lists, 2);
  // A deletion that happened while away is reported by the relist (the
  // subscribers hear it just after the cache is replaced: wait for it).
  EXPECT_TRUE(Eventually([&] {
    const auto keys = seen_.Keys();
    return std::any_of(keys.begin(), keys.end(),
                       [](const std::string& k) { return k.rfind("D before1@", 0) == 0; });
  }));
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
  ManualTimeSource& waits = informer_time_;  // records the informer's backoffs
  io_.time = &waits;
  informer_ = std::make_unique<Informer>(
      *client_, ResourceRef{"agents.x-k8s.io", "v1beta1", "sandboxes", true}, io_);
  sim_->AddFault(
      {"list", "sandboxes", 200, 0, false, R"({"kind":"SandboxList","items":[{"metad)", 1});
  sim_->AddFault({"watch", "sandboxes", 429, 4, false, "", 1});
  ASSERT_TRUE(client_->Send("POST", kSandboxes, SandboxJson("pre"), "application/json").ok());
  informer_->Start();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  EXPECT_EQ(informer_->stats().lists, 2);
  EXPECT_EQ(informer_->stats().decode_errors, 1);
  auto expected = Churn("t", 2);
  ASSERT_TRUE(Eventually([&] { return CacheState() == ServerState(); }));
  EXPECT_EQ(informer_->stats().watch_errors, 1);
  ASSERT_EQ(waits.sleeps().size(), 2u);     // one backoff after the bad list...
  EXPECT_EQ(waits.sleeps().at(1), 4000ms);  // ...and the watch's Retry-After, honoured
}

// Issue 9: a Retry-After of an hour on a refused watch would have silenced
// the informer for an hour; it waits a minute at most (docs/design.md#retries-and-rate-limits).
TEST_F(InformerTest, AWatchRetryAfterIsCappedAtAMinute) {
  ManualTimeSource& waits = informer_time_;
  io_.time = &waits;
  informer_ = std::make_unique<Informer>(
      *client_, ResourceRef{"agents.x-k8s.io", "v1beta1", "sandboxes", true}, io_);
  sim_->AddFault({"watch", "sandboxes", 429, 3600, false, "", 1});
  informer_->Start();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  ASSERT_TRUE(Eventually([&] { return informer_->stats().watches >= 2; }));
  ASSERT_EQ(waits.sleeps().size(), 1u);
  EXPECT_EQ(waits.sleeps().at(0), 60000ms);
}

TEST_F(InformerTest, BookmarksAdvanceTheResourceVersion) {
  client_.reset();
  server_.reset();
  sim::SimOptions fast;
  fast.emulate_agent_sandbox = false;
  fast.bookmark_interval = 20ms;
  StartServer({}, fast);
  Client();
  informer_ = std::make_unique<Informer>(
      *client_, ResourceRef{"agents.x-k8s.io", "v1beta1", "sandboxes", true}, io_);
  informer_->Start();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  // A change to another kind moves the global resourceVersion; only a bookmark can tell the sandbox
  // informer.
  sim_->store().Create(*sim::FindKind("", "pods"), "ns",
                       json::parse(R"({"metadata":{"name":"p"}})"));
  const std::string now = std::to_string(sim_->store().CurrentResourceVersion());
  EXPECT_TRUE(Eventually([&] { return informer_->stats().resource_version == now; }));
}

// ---- trimmed caches (issue 10) ---------------------------------------------------

// A page decoded with a transform holds one tree at a time: each item's tree
// is gone before the next item is parsed, so a list's peak is its body plus
// compact items, never a page (let alone a cluster) of trees.
TEST(DecodeListPage, EachTransformedItemsTreeIsFreedBeforeTheNextIsParsed) {
  std::string body = R"({"metadata":{"resourceVersion":"9"},"items":[)";
  for (int i = 0; i < 50; ++i) {
    body += std::string(i ? "," : "") + R"({"metadata":{"name":"p)" + std::to_string(i) +
            R"(","uid":"u)" + std::to_string(i) + R"(","resourceVersion":"3"},"spec":{}})";
  }
  body += "]}";
  std::vector<std::weak_ptr<const json::value>> trees;
  int alive_at_transform = 0;
  const Transform transform = [&](const DecodedObject& d) -> Result<std::shared_ptr<Cached>> {
    for (const auto& t : trees) alive_at_transform += !t.expired();
    trees.push_back(d.object);
    return std::shared_ptr<Cached>(std::make_shared<CachedPod>());
  };
  auto page = DecodeListPage(body, transform);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 50u);
  EXPECT_EQ(alive_at_transform, 0);
  for (const auto& t : trees) EXPECT_TRUE(t.expired());
  EXPECT_EQ(page->items[7].object, nullptr);
  EXPECT_EQ(page->items[7].cached->uid, "u7");
  EXPECT_EQ(page->items[7].cached->resource_version, "3");
}

// The production cache over a real API: compact structs only (no JSON tree is
// kept), only the two fence policies, and a pod -> sandbox index that follows
// the sandboxes' changes.
TEST_F(ClientTest, TheInformerCacheKeepsCompactStructsOfTheFencesSandboxesAndPods) {
  sim::SimOptions quiet;
  quiet.emulate_agent_sandbox = false;
  StartServer({}, quiet);
  Client();
  auto sc = sim::ParseScenario("namespaces: [{name: ns, sandboxes: [{name: a}, {name: b}]}]", "t");
  ASSERT_TRUE(sc.ok());
  ASSERT_TRUE(sim::ApplyScenario(*sim_, *sc).ok());
  const auto* policies = sim::FindKind("networking.k8s.io", "networkpolicies");
  ASSERT_TRUE(sim_->store()
                  .Create(*policies, "ns", json::parse(R"({"metadata":{"name":"allow-dns"}})"))
                  .ok());
  reconciler::CacheScope scope;
  scope.namespaces = {"ns"};
  scope.informer.initial_backoff = 5ms;
  reconciler::InformerCache cache(*client_, scope);
  cache.Start();
  ASSERT_TRUE(Eventually([&] { return cache.Synced(); }));
  EXPECT_EQ(cache.informers()[1]->store().size(), 2u);  // the fences, not allow-dns
  EXPECT_EQ(cache.Policy("ns", "allow-dns"), nullptr);
  ASSERT_NE(cache.Policy("ns", domain::kWorkloadPolicyName), nullptr);
  EXPECT_TRUE(cache.Policy("ns", domain::kWorkloadPolicyName)->Observation().intact);
  for (const auto& informer : cache.informers()) {
    for (const auto& cached : informer->store().List()) EXPECT_EQ(JsonOf(cached), nullptr);
  }
  const auto* sandboxes = sim::FindKind("agents.x-k8s.io", "sandboxes");
  const std::string uid_a = MetadataString(sim_->store().Get(*sandboxes, "ns", "a").object, "uid");
  ASSERT_NE(cache.Sandbox("ns", "a"), nullptr);
  EXPECT_EQ(cache.Sandbox("ns", "a")->Parsed("ns", "a").observation.uid, uid_a);
  ASSERT_NE(cache.Pod("ns", "os-supervisor-a"), nullptr);
  EXPECT_TRUE(cache.Pod("ns", "os-supervisor-a")->Observation().present);
  EXPECT_EQ(cache.SandboxesNamingPod("ns", "a"), std::vector<std::string>{"a"});
  EXPECT_EQ(cache.SandboxesNamingPod("ns", "os-supervisor-b"), std::vector<std::string>{"b"});

  // Watched changes: a new policy that is not a fence stays out; a sandbox
  // that now names another workload pod, and one deleted, leave the index.
  ASSERT_TRUE(sim_->store()
                  .Create(*policies, "ns", json::parse(R"({"metadata":{"name":"allow-web"}})"))
                  .ok());
  sim_->store().Mutate(
      *sandboxes, "ns", "a",
      [](json::value& v) -> std::optional<sim::ApiFailure> {
        v.at("metadata").at("annotations").as_object()["agents.x-k8s.io/pod-name"] = "a-2";
        return std::nullopt;
      },
      false);
  sim_->store().Delete(*sandboxes, "ns", "b", std::nullopt, std::nullopt);
  ASSERT_TRUE(Eventually([&] {
    return cache.Sandbox("ns", "b") == nullptr && cache.SandboxesNamingPod("ns", "a-2").size() == 1;
  }));
  EXPECT_TRUE(cache.SandboxesNamingPod("ns", "a").empty());
  EXPECT_TRUE(cache.SandboxesNamingPod("ns", "os-supervisor-b").empty());
  EXPECT_EQ(cache.SandboxesNamingPod("ns", "os-supervisor-a"), std::vector<std::string>{"a"});
  EXPECT_EQ(cache.Policy("ns", "allow-web"), nullptr);
  EXPECT_EQ(cache.informers()[1]->store().size(), 2u);
  cache.Stop();
}

// A pod event reads only the sandboxes that name the pod (the index), not
// every sandbox of the namespace: a rollout's pod events were quadratic.
TEST(PodIndex, APodEventReadsOnlyTheSandboxesThatNameIt) {
  testing::TempDir dir;
  auto journal = journal::Journal::Open(dir.File("journal.db"));
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  auto client = ApiClient::CreateWithTransport(
      {}, {}, std::make_unique<FakeTransport>([](const HttpRequest&) {
        return Result<HttpResponse>(Status::IOError("no API in this test"));
      }));
  fk::testing::MapCache cache;
  auto sandbox = [](int i, const std::string& extra = "") {
    const std::string n = std::to_string(i);
    return std::make_shared<const json::value>(
        json::parse(R"({"metadata":{"name":"sb-)" + n + R"(","namespace":"ns","uid":"u-)" + n +
                    R"(","labels":{"openshell.ai/sandbox-id":"Id-)" + n + R"("},"annotations":{)" +
                    extra + "}}}"));
  };
  constexpr int kSandboxes = 1000;
  for (int i = 0; i < kSandboxes; ++i) {
    cache.Put(reconciler::CacheKind::kSandboxes, "ns", "sb-" + std::to_string(i), sandbox(i));
  }
  ManualTimeSource time;
  reconciler::ControllerOptions o;
  o.time = &time;
  reconciler::Controller controller(cache, *client, **journal, o, nullptr, nullptr);
  auto on_pod = [&](const std::string& pod) {
    const size_t reads = cache.sandbox_reads();
    controller.OnChange(reconciler::CacheKind::kPods, "ns", pod);
    std::vector<std::string> keys;
    while (auto key = controller.queue().TryGet()) {
      controller.queue().Done(*key);
      keys.push_back(*key);
    }
    return std::pair(cache.sandbox_reads() - reads, keys);
  };
  using Touched = std::pair<size_t, std::vector<std::string>>;
  EXPECT_EQ(on_pod("os-supervisor-id-7"), (Touched{1, {"ns/sb-7"}}));
  EXPECT_EQ(on_pod("sb-8"), (Touched{1, {"ns/sb-8"}}));
  EXPECT_EQ(on_pod("nobody's"), (Touched{0, {}}));
  // The workload pod named by annotation: the index follows the change.
  cache.Put(reconciler::CacheKind::kSandboxes, "ns", "sb-9",
            sandbox(9, R"("agents.x-k8s.io/pod-name":"custom")"));
  EXPECT_EQ(on_pod("custom"), (Touched{1, {"ns/sb-9"}}));
  EXPECT_EQ(on_pod("sb-9"), (Touched{0, {}}));
  cache.Put(reconciler::CacheKind::kSandboxes, "ns", "sb-9", nullptr);
  EXPECT_EQ(on_pod("custom"), (Touched{0, {}}));
  EXPECT_EQ(on_pod("os-supervisor-id-9"), (Touched{0, {}}));
  EXPECT_EQ(cache.pod_index_size(), 2u * (kSandboxes - 1));
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

TEST(ApiStatus, DecodesStatusObjectsAndPlainBodies) {
  ApiError conflict = DecodeStatus(
      409,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","message":"modified","code":409})");
  EXPECT_EQ(conflict.kind, ApiErrorKind::kConflict);
  EXPECT_EQ(DecodeStatus(409, R"({"kind":"Status","reason":"AlreadyExists"})").kind,
            ApiErrorKind::kAlreadyExists);
  ApiError truncated = DecodeStatus(503, R"({"kind":"Sta)");
  EXPECT_EQ(truncated.kind, ApiErrorKind::kServerError);
  EXPECT_EQ(truncated.message, R"({"kind":"Sta)");
  ApiError in_watch =
      DecodeStatus(200, R"({"kind":"Status","reason":"Expired","code":410,"message":"too old"})");
  EXPECT_EQ(in_watch.kind, ApiErrorKind::kExpired);
  EXPECT_EQ(
      DecodeStatus(
          429, R"({"kind":"Status","reason":"TooManyRequests","details":{"retryAfterSeconds":7}})")
          .retry_after_seconds,
      7);
}

}  // namespace
}  // namespace fk::kube
