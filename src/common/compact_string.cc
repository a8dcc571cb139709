#include "common/compact_string.h"

#include <cstring>
#include <ostream>
#include <utility>

namespace fk {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

bool IsDash(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // an uppercase digit too: it would not come back the same
}

// The 16 bytes of a canonical lowercase UUID; false for any other text.
bool PackUuid(std::string_view text, uint8_t* out) {
  if (text.size() != 36) return false;
  int nibbles = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (IsDash(i)) {
      if (text[i] != '-') return false;
      continue;
    }
    const int v = HexValue(text[i]);
    if (v < 0) return false;
    if (nibbles % 2 == 0) {
      out[nibbles / 2] = static_cast<uint8_t>(v << 4);
    } else {
      out[nibbles / 2] = static_cast<uint8_t>(out[nibbles / 2] | v);
    }
    ++nibbles;
  }
  return true;
}

void SpellUuid(const uint8_t* bytes, char* out) {
  int nibble = 0;
  for (size_t i = 0; i < 36; ++i) {
    if (IsDash(i)) {
      out[i] = '-';
      continue;
    }
    const uint8_t b = bytes[nibble / 2];
    out[i] = kHexDigits[nibble % 2 == 0 ? b >> 4 : b & 0xf];
    ++nibble;
  }
}

}  // namespace

CompactString::CompactString(std::string_view text) {
  if (text.size() <= kInlineMax) {
    if (!text.empty()) std::memcpy(bytes_, text.data(), text.size());  // data() may be null
    inline_size_ = static_cast<uint8_t>(text.size());
    return;
  }
  if (PackUuid(text, bytes_)) {
    kind_ = Kind::kUuid;
    return;
  }
  char* data = new char[text.size()];
  std::memcpy(data, text.data(), text.size());
  const size_t size = text.size();
  std::memcpy(bytes_, static_cast<const void*>(&data), sizeof data);
  std::memcpy(bytes_ + sizeof data, &size, sizeof size);
  kind_ = Kind::kHeap;
}

char* CompactString::HeapData() const {
  char* data = nullptr;
  std::memcpy(static_cast<void*>(&data), bytes_, sizeof data);
  return data;
}

size_t CompactString::HeapSize() const {
  size_t size = 0;
  std::memcpy(&size, bytes_ + sizeof(char*), sizeof size);
  return size;
}

CompactString::CompactString(const CompactString& other)
    : inline_size_(other.inline_size_), kind_(other.kind_) {
  if (kind_ != Kind::kHeap) {
    std::memcpy(bytes_, other.bytes_, kInlineMax);  // inline text or a UUID: no allocation
    return;
  }
  kind_ = Kind::kInline;  // until the copy exists
  *this = CompactString(std::string_view(other.HeapData(), other.HeapSize()));
}

CompactString::CompactString(CompactString&& other) noexcept
    : inline_size_(other.inline_size_), kind_(other.kind_) {
  std::memcpy(bytes_, other.bytes_, kInlineMax);  // whatever they hold: ownership moves
  other.kind_ = Kind::kInline;
  other.inline_size_ = 0;
}

CompactString& CompactString::operator=(const CompactString& other) {
  if (this != &other) *this = CompactString(other);
  return *this;
}

CompactString& CompactString::operator=(CompactString&& other) noexcept {
  if (this == &other) return *this;
  Release();
  std::memcpy(bytes_, other.bytes_, kInlineMax);
  inline_size_ = other.inline_size_;
  kind_ = other.kind_;
  other.kind_ = Kind::kInline;
  other.inline_size_ = 0;
  return *this;
}

CompactString::~CompactString() { Release(); }

void CompactString::Release() {
  if (kind_ == Kind::kHeap) delete[] HeapData();
  kind_ = Kind::kInline;
  inline_size_ = 0;
}

std::string_view CompactString::View(Spelling* scratch) const {
  switch (kind_) {
    case Kind::kInline:
      return {reinterpret_cast<const char*>(bytes_), inline_size_};
    case Kind::kUuid:
      SpellUuid(bytes_, scratch->text);
      return {scratch->text, kUuidLength};
    case Kind::kHeap:
      return {HeapData(), HeapSize()};
  }
  return {};
}

std::string CompactString::str() const {
  Spelling scratch;
  return std::string(View(&scratch));
}

bool CompactString::operator==(std::string_view other) const {
  Spelling scratch;
  return View(&scratch) == other;
}

bool CompactString::operator==(const CompactString& other) const {
  Spelling scratch;
  return other == View(&scratch);
}

std::strong_ordering CompactString::operator<=>(const CompactString& other) const {
  Spelling theirs;
  return *this <=> other.View(&theirs);
}

std::strong_ordering CompactString::operator<=>(std::string_view other) const {
  Spelling mine;
  const int c = View(&mine).compare(other);
  return c < 0   ? std::strong_ordering::less
         : c > 0 ? std::strong_ordering::greater
                 : std::strong_ordering::equal;
}

std::ostream& operator<<(std::ostream& out, const CompactString& s) { return out << s.str(); }

}  // namespace fk
