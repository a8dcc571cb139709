// A string kept for a long time by the million (the caches' uids, resource
// versions, annotation values): 24 bytes, and no heap at all for what the API
// server sends most. Memory, not meaning: it holds any bytes and gives the
// same bytes back.
//
// - up to 22 bytes (names, resourceVersions, a phase): inline;
// - a canonical lowercase UUID (8-4-4-4-12 hex digits, as metadata.uid is):
//   its 16 bytes;
// - a timestamp as fencekeeper writes them (2026-12-05T07:01:12.684Z, RFC
//   3339 in milliseconds): its 17 digits in 9 bytes;
// - anything else (a hostile annotation, an uppercase UUID): one heap copy.
//
// A std::string of a 36-character uid costs 32 bytes plus a 37-byte heap
// block; at 10,000 sandboxes with five uids each that was 4 MB.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace fk {

class CompactString {
 public:
  CompactString() = default;
  explicit CompactString(std::string_view text);
  CompactString(const CompactString& other);
  CompactString(CompactString&& other) noexcept;
  CompactString& operator=(const CompactString& other);
  CompactString& operator=(CompactString&& other) noexcept;
  ~CompactString();

  std::string str() const;
  bool empty() const { return kind_ == Kind::kInline && inline_size_ == 0; }

  bool operator==(std::string_view other) const;
  bool operator==(const CompactString& other) const;
  // The order of the texts, as std::string's: a map keyed by these iterates
  // as one keyed by the strings would.
  std::strong_ordering operator<=>(const CompactString& other) const;
  // So a map keyed by these (with std::less<>) is searched by any text.
  std::strong_ordering operator<=>(std::string_view other) const;

 private:
  enum class Kind : uint8_t { kInline, kUuid, kTimestamp, kHeap };
  static constexpr size_t kInlineMax = 22;
  static constexpr size_t kUuidLength = 36;
  // Where a UUID is spelled out to be read as text.
  struct Spelling {
    char text[kUuidLength];  // the longest template
  };
  std::string_view View(Spelling* scratch) const;
  static std::string_view Template(Kind kind);  // of a packed kind
  bool Packed() const;                          // kUuid or kTimestamp
  void Release();
  // A heap copy's pointer and size live in bytes_ too, copied in and out:
  // an aligned member would round the object up to 32 bytes.
  char* HeapData() const;
  size_t HeapSize() const;

  // The text (kInline), the digits of a UUID or a timestamp (kUuid,
  // kTimestamp; the bytes after them zero) or the heap copy's pointer and
  // size (kHeap).
  unsigned char bytes_[kInlineMax] = {};
  uint8_t inline_size_ = 0;
  Kind kind_ = Kind::kInline;
};
static_assert(sizeof(CompactString) == 24);

std::ostream& operator<<(std::ostream& out, const CompactString& s);

}  // namespace fk
