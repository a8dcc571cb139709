// Text that most objects leave empty, kept on the heap when it is not: 8
// bytes where a CompactString takes 24 (a cached sandbox's parse error, its
// workload pod's name when it is not the sandbox's, its bootstrap phase:
// issue 20, a sandbox's cache entry).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace fk {

class HeapText {
 public:
  HeapText() = default;
  explicit HeapText(std::string_view text)
      : text_(text.empty() ? nullptr : std::make_unique<std::string>(text)) {}
  HeapText(const HeapText& o) : HeapText(o.view()) {}
  HeapText(HeapText&&) noexcept = default;
  HeapText& operator=(const HeapText& o) {
    if (this != &o) *this = HeapText(o.view());
    return *this;
  }
  HeapText& operator=(HeapText&&) noexcept = default;
  ~HeapText() = default;

  bool empty() const { return text_ == nullptr; }
  std::string_view view() const { return text_ ? std::string_view(*text_) : std::string_view(); }
  std::string str() const { return std::string(view()); }
  bool operator==(std::string_view other) const { return view() == other; }
  bool operator==(const HeapText& other) const { return view() == other.view(); }

 private:
  std::unique_ptr<std::string> text_;
};

}  // namespace fk
