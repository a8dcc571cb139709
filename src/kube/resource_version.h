// A resourceVersion as a cache keeps it, in 8 bytes (a CompactString takes
// 24, and a sandbox has three: its own and its two pods'). The API
// server's are etcd revisions, decimal numbers, kept as the number; the API
// calls them opaque, so any other text is kept as it is, on the heap.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace fk::kube {

class ResourceVersion {
 public:
  ResourceVersion() = default;
  explicit ResourceVersion(std::string_view text);
  ResourceVersion(const ResourceVersion& o);
  ResourceVersion(ResourceVersion&& o) noexcept : bits_(o.bits_) { o.bits_ = 0; }
  ResourceVersion& operator=(const ResourceVersion& o);
  ResourceVersion& operator=(ResourceVersion&& o) noexcept;
  ~ResourceVersion();

  std::string str() const;
  bool empty() const { return bits_ == 0; }
  // Equal texts: a number and a text are never equal, as only a text that
  // is not a number's own spelling ("007", "x1") is kept as text.
  bool operator==(const ResourceVersion& o) const;
  bool operator==(std::string_view text) const { return str() == text; }

 private:
  // 0: empty. Low bit set: a number n, as n << 1 | 1 (n < 2^63). Low bit
  // clear: a std::string* (aligned, so its low bit is free).
  bool IsNumber() const { return (bits_ & 1) != 0; }
  const std::string* Text() const;
  uint64_t bits_ = 0;
};
static_assert(sizeof(ResourceVersion) == 8);

}  // namespace fk::kube
