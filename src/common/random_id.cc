#include "common/random_id.h"

#include <fstream>
#include <random>

namespace fk {

std::array<unsigned char, 16> RandomBytes() {
  std::array<unsigned char, 16> b{};
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  if (!urandom.read(reinterpret_cast<char*>(b.data()), b.size())) {
    std::random_device rd;
    for (auto& c : b) c = static_cast<unsigned char>(rd());
  }
  return b;
}

std::string NewWriterId() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : RandomBytes()) {
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

}  // namespace fk
