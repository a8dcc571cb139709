// One Beast stream type for plain and TLS connections, so the HTTP client
// (kube/http_transport.cc) and server (http/server.cc) instantiate Beast's
// HTTP reads and writes, and their own coroutines, once instead of once per
// stream type. A view: the tcp_stream or ssl_stream it wraps must outlive it
// and every operation started through it. Reads and writes go through a
// type-erased handler to non-template functions in any_stream.cc (fk_net),
// where the tcp_stream and ssl_stream operations are compiled once.
#pragma once

#include <array>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <cstddef>
#include <utility>

namespace fk::net {

class AnyStream {
 public:
  using executor_type = boost::asio::any_io_executor;
  using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

  explicit AnyStream(boost::beast::tcp_stream& plain) : plain_(&plain) {}
  explicit AnyStream(TlsStream& tls) : tls_(&tls) {}

  executor_type get_executor() const;
  // The TCP layer, for timeouts and shutdown.
  boost::beast::tcp_stream& lowest() const;

  // The AsyncReadStream and AsyncWriteStream requirements, as Beast's
  // algorithms call them. The non-empty buffers of a sequence are passed on,
  // at most kMaxBuffers of them.
  template <class MutableBufferSequence, class Token>
  auto async_read_some(const MutableBufferSequence& buffers, Token&& token) {
    return Start<boost::asio::mutable_buffer>(&AnyStream::ReadSome, buffers,
                                              std::forward<Token>(token));
  }
  template <class ConstBufferSequence, class Token>
  auto async_write_some(const ConstBufferSequence& buffers, Token&& token) {
    return Start<boost::asio::const_buffer>(&AnyStream::WriteSome, buffers,
                                            std::forward<Token>(token));
  }

 private:
  using Signature = void(boost::system::error_code, std::size_t);
  using Handler = boost::asio::any_completion_handler<Signature>;
  // What an Asio socket hands the kernel in one call anyway (and an SSL
  // stream uses only the first buffer), so the bytes each write moves do not
  // change.
  static constexpr std::size_t kMaxBuffers = 64;

  // A buffer sequence of fixed type, whatever sequence Beast passed.
  template <class Buffer>
  struct Buffers {
    std::array<Buffer, kMaxBuffers> items{};
    std::size_t count = 0;
    const Buffer* begin() const { return items.data(); }
    const Buffer* end() const { return items.data() + count; }
  };
  template <class Buffer, class Sequence>
  static Buffers<Buffer> Gather(const Sequence& sequence) {
    Buffers<Buffer> list;
    auto it = boost::asio::buffer_sequence_begin(sequence);
    const auto end = boost::asio::buffer_sequence_end(sequence);
    for (; it != end && list.count < kMaxBuffers; ++it) {
      const Buffer buffer(*it);
      if (buffer.size() > 0) list.items[list.count++] = buffer;
    }
    return list;
  }

  // Hands `sequence`, as Buffers, and the handler `token` makes to `op`.
  template <class Buffer, class Sequence, class Token>
  auto Start(void (AnyStream::*op)(const Buffers<Buffer>&, Handler), const Sequence& sequence,
             Token&& token) {
    return boost::asio::async_initiate<Token, Signature>(
        [this, op](auto handler, const Buffers<Buffer>& list) {
          (this->*op)(list, Handler(std::move(handler)));
        },
        token, Gather<Buffer>(sequence));
  }

  using Bound = boost::asio::executor_binder<Handler, executor_type>;
  Bound Bind(Handler handler) const;
  void ReadSome(const Buffers<boost::asio::mutable_buffer>& buffers, Handler handler);
  void WriteSome(const Buffers<boost::asio::const_buffer>& buffers, Handler handler);

  boost::beast::tcp_stream* plain_ = nullptr;
  TlsStream* tls_ = nullptr;
};

}  // namespace fk::net
