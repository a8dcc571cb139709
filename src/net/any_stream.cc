#include "net/any_stream.h"

#include <boost/asio/ssl/stream.hpp>

namespace fk::net {

AnyStream::executor_type AnyStream::get_executor() const {
  return tls_ ? tls_->get_executor() : plain_->get_executor();
}

boost::beast::tcp_stream& AnyStream::lowest() const {
  return tls_ ? boost::beast::get_lowest_layer(*tls_) : *plain_;
}

// The handler runs on the stream's executor, which is the one its coroutine
// runs on: Boost 1.81's any_completion_executor cannot be asked for
// blocking.never, as the streams' operations do.
AnyStream::Bound AnyStream::Bind(Handler handler) const {
  return boost::asio::bind_executor(get_executor(), std::move(handler));
}

void AnyStream::ReadSome(const Buffers<boost::asio::mutable_buffer>& buffers, Handler handler) {
  if (tls_) {
    tls_->async_read_some(buffers, Bind(std::move(handler)));
  } else {
    plain_->async_read_some(buffers, Bind(std::move(handler)));
  }
}

void AnyStream::WriteSome(const Buffers<boost::asio::const_buffer>& buffers, Handler handler) {
  if (tls_) {
    tls_->async_write_some(buffers, Bind(std::move(handler)));
  } else {
    plain_->async_write_some(buffers, Bind(std::move(handler)));
  }
}

}  // namespace fk::net
