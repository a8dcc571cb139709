// fencekeeper's one HTTP server (http/server.h), as the probes and the
// simulator use it: whole replies with their headers, a stream pulled as it
// wakes the server from another thread, and the query helpers.
#include "http/server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "kube/client.h"
#include "test_support.h"

namespace fk::http {
namespace {
using namespace std::chrono_literals;

std::unique_ptr<kube::ApiClient> ClientOf(const Server& server) {
  kube::ClusterConfig c;
  c.server = "http://127.0.0.1:" + std::to_string(server.port());
  kube::ClientOptions o;
  o.max_retries = 0;
  auto client = kube::ApiClient::Create(c, o);
  EXPECT_TRUE(client.ok());
  return std::move(*client);
}

TEST(HttpServer, AnswersWithTheHandlersReplyAndSeesTheRequestWhole) {
  Request seen;
  ServerOptions o;
  o.server_name = "test-server";
  Server server(std::move(o), [&](const Request& r) {
    seen = r;
    return Reply{429, "slow down", "text/plain", 7};
  });
  ASSERT_TRUE(server.Start().ok());
  auto client = ClientOf(server);
  const kube::ApiResult r = client->Send("POST", "/a/b?x=1&y", "body!", "application/json");
  EXPECT_EQ(kube::HttpCode(r), 429);
  EXPECT_EQ(kube::ApiErrorOf(r.status()).message, "slow down");  // the body, not a Status
  EXPECT_EQ(kube::ApiErrorOf(r.status()).retry_after_seconds, 7);
  EXPECT_EQ(seen.method, "POST");
  EXPECT_EQ(seen.path, "/a/b");
  EXPECT_EQ(seen.query, "x=1&y");
  EXPECT_EQ(seen.target, "/a/b?x=1&y");
  EXPECT_EQ(seen.body, "body!");
  EXPECT_EQ(seen.content_type, "application/json");
  EXPECT_FALSE(seen.client_certificate);
  server.Stop();
  server.Stop();  // idempotent
}

// Chunks handed over from another thread reach the client through the waker;
// the stream ends when Next says so.
class PushedStream final : public Stream {
 public:
  void Push(std::string chunk, bool last) {
    std::function<void()> wake;
    {
      std::lock_guard lock(mu_);
      chunks_.push_back(std::move(chunk));
      done_ = last;
      wake = wake_;
    }
    if (wake) wake();
  }
  void SetWaker(std::function<void()> wake) override {
    std::lock_guard lock(mu_);
    wake_ = std::move(wake);
  }
  Pull Next() override {
    ++pulls;
    std::lock_guard lock(mu_);
    Pull p;
    p.chunks = std::exchange(chunks_, {});
    p.done = done_;
    p.next = std::chrono::steady_clock::now() + 1h;  // only a wake brings the next pull
    return p;
  }
  std::atomic<int> pulls{0};

 private:
  std::mutex mu_;
  std::vector<std::string> chunks_;
  bool done_ = false;
  std::function<void()> wake_;
};

TEST(HttpServer, AStreamIsPulledWhenItWakesTheServerUntilItIsDone) {
  std::atomic<PushedStream*> stream{nullptr};
  Server server("127.0.0.1", 0, [&](const Request&) {
    auto s = std::make_unique<PushedStream>();
    s->Push("first\n", false);
    stream = s.get();  // read by the pusher thread
    return Response(std::move(s));
  });
  ASSERT_TRUE(server.Start().ok());
  std::thread pusher([&] {
    ASSERT_TRUE(fk::testing::Eventually([&] {
      auto* s = stream.load();
      return s && s->pulls >= 1;
    }));
    stream.load()->Push("second\n", false);
    ASSERT_TRUE(fk::testing::Eventually([&] { return stream.load()->pulls >= 2; }));
    stream.load()->Push("third\n", true);
  });
  auto client = ClientOf(server);
  const kube::ApiResult r = client->Get("/watch");
  pusher.join();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->code, 200);
  EXPECT_EQ(r->body, "first\nsecond\nthird\n");
}

TEST(HttpServer, AnAddressInUseOrBadTlsIsAnErrorNamingIt) {
  Server first("127.0.0.1", 0, [](const Request&) { return Reply{}; });
  ASSERT_TRUE(first.Start().ok());
  Server second("127.0.0.1", first.port(), [](const Request&) { return Reply{}; });
  const Status in_use = second.Start();
  EXPECT_FALSE(in_use.ok());
  EXPECT_NE(in_use.message().find("cannot listen on 127.0.0.1:"), std::string::npos)
      << in_use.ToString();
  ServerOptions bad;
  bad.tls_cert_pem = "not a certificate";
  bad.tls_key_pem = "not a key";
  Server tls(std::move(bad), [](const Request&) { return Reply{}; });
  const Status refused = tls.Start();
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.message().rfind("TLS: ", 0), 0u) << refused.ToString();
}

TEST(QueryParameters, PresenceAndValuesAsKubernetesComponentsReadThem) {
  EXPECT_TRUE(HasQueryParameter("verbose", "verbose"));
  EXPECT_TRUE(HasQueryParameter("a=1&verbose=", "verbose"));
  EXPECT_FALSE(HasQueryParameter("verbosely", "verbose"));
  EXPECT_EQ(QueryParameterValues("exclude=a&x=1&exclude=b", "exclude"),
            (std::vector<std::string>{"a", "b"}));
}

}  // namespace
}  // namespace fk::http
