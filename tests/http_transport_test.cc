// The HTTP transport (kube/http_transport.h) against bare socket servers: a
// reused connection the server closed (a write is not re-sent, a read is),
// the body limit, the timeout of the whole exchange, the User-Agent; and
// against a server that never answers: a cancel ends an exchange, a TLS
// handshake and a stream in flight, and a silent watch ends after its idle
// timeout.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "common/version.h"
#include "hanging_server.h"
#include "kube/http_transport.h"
#include "test_support.h"

namespace fk::kube {
namespace {
using namespace std::chrono_literals;

using fk::testing::Eventually;

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
  EXPECT_EQ(r.status().code(), Code::kCancelled) << r.status().ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);

  std::atomic<bool> ended{false};
  std::atomic<Code> end_code{Code::kOk};
  auto stream = (*transport)
                    ->OpenStream({"GET", "/watch", "", "", {}},
                                 {[](std::string_view) {},
                                  [&](const Status& s, std::optional<HttpResponse>) {
                                    end_code = s.code();
                                    ended = true;
                                  }});
  ASSERT_TRUE(Eventually([&] { return hung.connections() >= 2; }));
  const auto cancelled_at = std::chrono::steady_clock::now();
  stream->Cancel();
  ASSERT_TRUE(Eventually([&] { return ended.load(); }, 5s));
  EXPECT_EQ(end_code.load(), Code::kCancelled) << "a cancel is not a failure of the stream";
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

// ---- flow control: a stream held back by its consumer --------------------------

constexpr size_t kLines = 4096;
constexpr size_t kLineBytes = 1024;  // with its newline
constexpr size_t kBehindAt = size_t{256} << 10;
constexpr char kChunkedHeader[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
constexpr char kLastChunk[] = "0\r\n\r\n";

// `n` lines of kLineBytes, one per chunk.
std::string LineChunks(size_t n) {
  char size[16];
  std::snprintf(size, sizeof size, "%zx\r\n", kLineBytes);
  const std::string chunk = size + std::string(kLineBytes - 1, 'x') + "\n\r\n";
  std::string out;
  for (size_t i = 0; i < n; ++i) out += chunk;
  return out;
}

// A watch whose whole 4 MiB body the server sends at once (as fast as TCP
// takes it).
testing::HangingServer::Handler Flood() {
  return [](const testing::HangingRequest&) {
    testing::HangingReply reply;
    reply.raw = kChunkedHeader + LineChunks(kLines) + kLastChunk;
    return std::optional<testing::HangingReply>(reply);
  };
}

// A consumer that says it is behind once kBehindAt bytes arrived, until let go.
struct SlowConsumer {
  std::atomic<size_t> bytes{0};
  std::atomic<size_t> lines{0};
  std::atomic<int> refusals{0};  // times `ready` said no
  std::atomic<bool> let_go{false};
  std::atomic<bool> ended{false};
  std::atomic<Code> end_code{Code::kInternal};

  Transport::StreamCallbacks Callbacks() {
    Transport::StreamCallbacks callbacks;
    callbacks.on_line = [this](std::string_view line) {
      bytes += line.size() + 1;
      ++lines;
    };
    callbacks.on_end = [this](const Status& s, std::optional<HttpResponse>) {
      end_code = s.code();
      ended = true;
    };
    callbacks.ready = [this] {
      if (let_go || bytes < kBehindAt) return true;
      ++refusals;
      return false;
    };
    return callbacks;
  }
};

class StreamFlowControl : public ::testing::Test {
 protected:
  // Opens a watch on server_ read by consumer_, and waits until it is behind.
  void OpenHeldBack(TransportConfig config = {}) {
    config.server = server_->url();
    auto transport = HttpTransport::Create(config);
    ASSERT_TRUE(transport.ok()) << transport.status().ToString();
    transport_ = std::move(*transport);
    stream_ = transport_->OpenStream({"GET", "/watch", "", "", {}}, consumer_.Callbacks());
    ASSERT_TRUE(Eventually([&] { return consumer_.refusals >= 1; }, 10s));
  }
  // The consumer is let go before the stream's handle waits for its end, so
  // a test that fails ends instead of hanging.
  void TearDown() override {
    consumer_.let_go = true;
    stream_.reset();
  }
  // Lets the consumer go and waits for the stream's end, which must be clean
  // and bring every line.
  void ExpectTheWholeStreamOnceLetGo() {
    consumer_.let_go = true;
    ASSERT_TRUE(Eventually([&] { return consumer_.ended.load(); }, 10s));
    EXPECT_EQ(consumer_.end_code.load(), Code::kOk);
    EXPECT_EQ(consumer_.lines.load(), kLines);
    EXPECT_EQ(consumer_.bytes.load(), kLines * kLineBytes);
  }

  std::unique_ptr<testing::HangingServer> server_;
  SlowConsumer consumer_;
  std::unique_ptr<HttpTransport> transport_;
  std::unique_ptr<Transport::Stream> stream_;
};

// While the consumer is behind, nothing more of the body is read: what it
// got stays where it was, one socket read past its mark at most. Let go, the
// stream runs to its end with every line.
TEST_F(StreamFlowControl, AStreamReadsNoMoreWhileItsConsumerIsBehind) {
  server_ = std::make_unique<testing::HangingServer>(Flood());
  ASSERT_NO_FATAL_FAILURE(OpenHeldBack());
  const size_t held = consumer_.bytes;
  // Asked again and again and still behind: no read happened in between.
  ASSERT_TRUE(Eventually([&] { return consumer_.refusals >= 50; }, 10s));
  EXPECT_EQ(consumer_.bytes.load(), held);
  EXPECT_LT(held, kBehindAt + (size_t{128} << 10));
  EXPECT_FALSE(consumer_.ended.load());
  ExpectTheWholeStreamOnceLetGo();
}

// A pause longer than the idle timeout is not a silent server: the server
// sends kBehindAt bytes of lines and the rest only once the consumer is let
// go, so the first read after the pause waits on the socket, under an idle
// timer armed after the pause (armed before it, that read timed out at once).
TEST_F(StreamFlowControl, APauseLongerThanTheIdleTimeoutIsNotASilentServer) {
  server_ = std::make_unique<testing::HangingServer>([this](const testing::HangingRequest&) {
    testing::HangingReply reply;
    reply.raw = kChunkedHeader + LineChunks(kBehindAt / kLineBytes);
    // Built before the pause: under TSan on a loaded machine building it
    // took 300 ms, a silent server by this test's idle timeout.
    reply.then = [this, rest = LineChunks(kLines - kBehindAt / kLineBytes) + kLastChunk] {
      Eventually([&] { return consumer_.let_go.load(); }, 30s);
      return rest;
    };
    return std::optional<testing::HangingReply>(reply);
  });
  TransportConfig config;
  config.stream_idle_timeout = 500ms;
  ASSERT_NO_FATAL_FAILURE(OpenHeldBack(config));
  const auto paused_at = std::chrono::steady_clock::now();
  ASSERT_TRUE(
      Eventually([&] { return std::chrono::steady_clock::now() - paused_at > 1500ms; }, 10s));
  EXPECT_FALSE(consumer_.ended.load()) << "a stream held back is not idle";
  ExpectTheWholeStreamOnceLetGo();
}

// A stream held back ends at once when cancelled, not when its consumer
// catches up.
TEST_F(StreamFlowControl, ACancelEndsAStreamHeldBack) {
  server_ = std::make_unique<testing::HangingServer>(Flood());
  ASSERT_NO_FATAL_FAILURE(OpenHeldBack());
  stream_->Cancel();
  ASSERT_TRUE(Eventually([&] { return consumer_.ended.load(); }, 5s));
  EXPECT_EQ(consumer_.end_code.load(), Code::kCancelled);
  EXPECT_LT(consumer_.lines.load(), kLines);
}

}  // namespace
}  // namespace fk::kube
