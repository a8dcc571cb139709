#include "kube/resource_version.h"

#include <bit>
#include <charconv>

namespace fk::kube {
namespace {

// The number `text` spells in its own canonical form (no sign, no leading
// zero, below 2^63), if it does.
bool AsNumber(std::string_view text, uint64_t* n) {
  if (text.empty() || text.size() > 19 || (text.size() > 1 && text[0] == '0')) return false;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, *n);
  return ec == std::errc() && p == end && *n < (uint64_t{1} << 63);
}

uint64_t PointerBits(const std::string* s) { return std::bit_cast<uint64_t>(s); }

}  // namespace

ResourceVersion::ResourceVersion(std::string_view text) {
  uint64_t n = 0;
  if (text.empty()) return;
  if (AsNumber(text, &n)) {
    bits_ = n << 1 | 1;
  } else {
    bits_ = PointerBits(new std::string(text));
  }
}

const std::string* ResourceVersion::Text() const {
  return std::bit_cast<const std::string*>(bits_);
}

ResourceVersion::ResourceVersion(const ResourceVersion& o) : bits_(o.bits_) {
  if (!empty() && !IsNumber()) bits_ = PointerBits(new std::string(*o.Text()));
}

ResourceVersion& ResourceVersion::operator=(const ResourceVersion& o) {
  if (this != &o) *this = ResourceVersion(o);
  return *this;
}

ResourceVersion& ResourceVersion::operator=(ResourceVersion&& o) noexcept {
  if (this != &o) {
    this->~ResourceVersion();
    bits_ = o.bits_;
    o.bits_ = 0;
  }
  return *this;
}

ResourceVersion::~ResourceVersion() {
  if (!empty() && !IsNumber()) delete Text();
}

std::string ResourceVersion::str() const {
  if (empty()) return {};
  if (IsNumber()) return std::to_string(bits_ >> 1);
  return *Text();
}

bool ResourceVersion::operator==(const ResourceVersion& o) const {
  if (empty() || o.empty() || IsNumber() || o.IsNumber()) return bits_ == o.bits_;
  return *Text() == *o.Text();
}

}  // namespace fk::kube
