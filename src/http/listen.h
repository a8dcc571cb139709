// Binding a listening socket, for both of fencekeeper's HTTP servers (the
// probe/metrics server and the simulator): a failure reads as people say it
// ("cannot listen on 127.0.0.1:8080: address already in use"), not as Boost's
// exception text with its source file and function. Included only by the two
// servers' .cc files, which compile Asio anyway.
#pragma once

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cctype>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace fk::http {

// Opens, binds and listens `acceptor` on host:port (port 0: any free port).
inline Status ListenOn(boost::asio::ip::tcp::acceptor& acceptor, const std::string& host,
                       uint16_t port) {
  const std::string where = host + ":" + std::to_string(port);
  boost::system::error_code ec;
  const boost::asio::ip::address address = boost::asio::ip::make_address(host, ec);
  if (ec) return Status::InvalidArgument("cannot listen on " + where + ": not an IP address");
  const boost::asio::ip::tcp::endpoint endpoint(address, port);
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(boost::asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(boost::asio::socket_base::max_listen_connections, ec);
  if (!ec) return Status::Ok();
  std::string why = ec.message();  // "Address already in use" -> "address already in use"
  if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
  return Status::IOError("cannot listen on " + where + ": " + why);
}

}  // namespace fk::http
