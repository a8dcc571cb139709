// An HTTP/1.1 server for tests that can hang: it accepts every connection,
// reads each request, and asks a function what to do — answer with a status
// and body, or never answer at all (the connection stays open and silent, as
// a hung API server's does). With no function it hangs on everything: a
// server that accepts connections and never says a word. Plain POSIX
// sockets, a thread per connection; the destructor unblocks and joins them.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace fk::testing {

struct HangingRequest {
  std::string method;
  std::string target;
  std::string body;
};

struct HangingReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  // Sent as is instead of a whole response (e.g. a header and no body).
  std::string raw;
  // Called once `raw` is sent (on the connection's thread, so it may wait);
  // what it returns is sent next: a body that stops and goes on.
  std::function<std::string()> then;
};

class HangingServer {
 public:
  // nullopt: hang (never answer this request, nor any later one on its connection).
  using Handler = std::function<std::optional<HangingReply>(const HangingRequest&)>;

  explicit HangingServer(Handler handler = nullptr) : handler_(std::move(handler)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(listen_fd_, 64);
    socklen_t len = sizeof addr;
    ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    acceptor_ = std::thread([this] { Accept(); });
  }
  ~HangingServer() {
    stopping_ = true;
    ::shutdown(listen_fd_, SHUT_RDWR);  // unblocks accept()
    acceptor_.join();
    std::vector<std::thread> threads;
    {
      std::lock_guard lock(mu_);
      for (int fd : fds_) ::shutdown(fd, SHUT_RDWR);  // unblocks recv()
      threads.swap(threads_);
    }
    for (auto& t : threads) t.join();
    for (int fd : fds_) ::close(fd);
    ::close(listen_fd_);
  }
  HangingServer(const HangingServer&) = delete;
  HangingServer& operator=(const HangingServer&) = delete;

  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_.load(); }
  int requests() const { return requests_.load(); }

 private:
  void Accept() {
    for (;;) {
      const int fd = ::accept(listen_fd_, nullptr, nullptr);
      if (fd < 0 || stopping_) {
        if (fd >= 0) ::close(fd);
        return;
      }
      ++connections_;
      std::lock_guard lock(mu_);
      fds_.push_back(fd);
      threads_.emplace_back([this, fd] { Serve(fd); });
    }
  }

  void Serve(int fd) {
    std::string buf;
    for (;;) {
      auto request = ReadRequest(fd, buf);
      if (!request) return;
      ++requests_;
      std::optional<HangingReply> reply = handler_ ? handler_(*request) : std::nullopt;
      if (!reply) return;  // hang: the socket stays open until the destructor
      std::string out = reply->raw;
      if (out.empty()) {
        out = "HTTP/1.1 " + std::to_string(reply->status) +
              " X\r\nContent-Type: " + reply->content_type +
              "\r\nContent-Length: " + std::to_string(reply->body.size()) + "\r\n\r\n" +
              reply->body;
      }
      if (::send(fd, out.data(), out.size(), MSG_NOSIGNAL) < 0) return;
      if (reply->then) {
        const std::string more = reply->then();
        if (::send(fd, more.data(), more.size(), MSG_NOSIGNAL) < 0) return;
      }
    }
  }

  // One request (head and a Content-Length body) from `buf` and the socket.
  static std::optional<HangingRequest> ReadRequest(int fd, std::string& buf) {
    size_t head_end;
    while ((head_end = buf.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill(fd, buf)) return std::nullopt;
    }
    const std::string head = buf.substr(0, head_end);
    HangingRequest r;
    const size_t sp1 = head.find(' '), sp2 = head.find(' ', sp1 + 1);
    r.method = head.substr(0, sp1);
    r.target = head.substr(sp1 + 1, sp2 - sp1 - 1);
    size_t length = 0;
    std::string lower = head;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (const size_t at = lower.find("\r\ncontent-length:"); at != std::string::npos)
      length = std::stoul(head.substr(at + 17));
    while (buf.size() < head_end + 4 + length) {
      if (!Fill(fd, buf)) return std::nullopt;
    }
    r.body = buf.substr(head_end + 4, length);
    buf.erase(0, head_end + 4 + length);
    return r;
  }
  static bool Fill(int fd, std::string& buf) {
    char chunk[4096];
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n <= 0) return false;
    buf.append(chunk, static_cast<size_t>(n));
    return true;
  }

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<int> fds_;
  std::vector<std::thread> threads_;
};

}  // namespace fk::testing
