#include "common/compact_string.h"

#include <cstring>
#include <ostream>
#include <utility>

namespace fk {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

// The texts packed as their digits, one nibble each: 'x' stands for a
// lowercase hex digit, 'd' for a decimal one, anything else for itself. A
// text packs only if it matches its template exactly, so it comes back the
// same; and since the digits keep their order as nibbles, two packed texts of
// one template order as their bytes do.
constexpr std::string_view kTemplates[] = {
    "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx",  // Kind::kUuid: metadata.uid
    "dddd-dd-ddTdd:dd:dd.dddZ",              // Kind::kTimestamp: RFC 3339 in ms
};

int DigitValue(char slot, char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (slot == 'x' && c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;  // an uppercase hex digit too: it would not come back the same
}

bool PackDigits(std::string_view text, std::string_view tmpl, uint8_t* out) {
  if (text.size() != tmpl.size()) return false;
  int nibbles = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (tmpl[i] != 'x' && tmpl[i] != 'd') {
      if (text[i] != tmpl[i]) return false;
      continue;
    }
    const int v = DigitValue(tmpl[i], text[i]);
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

void SpellDigits(const uint8_t* bytes, std::string_view tmpl, char* out) {
  int nibble = 0;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    if (tmpl[i] != 'x' && tmpl[i] != 'd') {
      out[i] = tmpl[i];
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
  for (const Kind kind : {Kind::kUuid, Kind::kTimestamp}) {
    uint8_t packed[kInlineMax] = {};  // zero past the digits: equality compares every byte
    if (PackDigits(text, Template(kind), packed)) {
      std::memcpy(bytes_, packed, kInlineMax);
      kind_ = kind;
      return;
    }
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
    case Kind::kTimestamp:
      SpellDigits(bytes_, Template(kind_), scratch->text);
      return {scratch->text, Template(kind_).size()};
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

std::string_view CompactString::Template(Kind kind) {
  return kTemplates[kind == Kind::kUuid ? 0 : 1];
}

bool CompactString::Packed() const { return kind_ == Kind::kUuid || kind_ == Kind::kTimestamp; }

bool CompactString::operator==(const CompactString& other) const {
  // A text has one form (the first that fits), so forms that differ hold
  // different texts; packed ones are equal when their bytes are.
  if (kind_ != other.kind_) return false;
  if (Packed()) return std::memcmp(bytes_, other.bytes_, kInlineMax) == 0;
  Spelling scratch;
  return other == View(&scratch);
}

std::strong_ordering CompactString::operator<=>(const CompactString& other) const {
  // Two packed texts of one template order as their bytes (kTemplates): the
  // maps keyed by uids compare without spelling either out.
  if (kind_ == other.kind_ && Packed()) {
    const int c = std::memcmp(bytes_, other.bytes_, kInlineMax);
    return c < 0   ? std::strong_ordering::less
           : c > 0 ? std::strong_ordering::greater
                   : std::strong_ordering::equal;
  }
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
