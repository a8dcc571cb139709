// The one translation unit that compiles Asio, Asio's SSL support and Beast
// (BOOST_ASIO_SEPARATE_COMPILATION / BOOST_BEAST_SEPARATE_COMPILATION are set
// for every target that links fk_net). Everything else includes only headers.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
