// Text that most objects leave empty, kept on the heap when it is not: 8
// bytes where a CompactString takes 24 and an std::string 32 (a cached
// sandbox's parse error, its workload pod's name when it is not the
// sandbox's; a decision's note, which a healthy sandbox's decision lacks).
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>

namespace fk {

class HeapText {
 public:
  HeapText() = default;
  // Implicit, as std::string's: a decision's note is written as text.
  HeapText(std::string_view text)
      : text_(text.empty() ? nullptr : std::make_unique<std::string>(text)) {}
  HeapText(const std::string& text) : HeapText(std::string_view(text)) {}
  HeapText(const char* text) : HeapText(std::string_view(text)) {}
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
  operator std::string_view() const { return view(); }  // reads as text, as std::string does
  HeapText& operator+=(std::string_view more) {
    if (more.empty()) return *this;
    if (text_)
      text_->append(more);
    else
      text_ = std::make_unique<std::string>(more);
    return *this;
  }
  bool operator==(std::string_view other) const { return view() == other; }
  bool operator==(const std::string& other) const { return view() == other; }
  bool operator==(const char* other) const { return view() == other; }
  bool operator==(const HeapText& other) const { return view() == other.view(); }
  friend std::ostream& operator<<(std::ostream& out, const HeapText& t) { return out << t.view(); }

 private:
  std::unique_ptr<std::string> text_;
};

}  // namespace fk
