// An optional value kept on the heap, with the value semantics of
// std::optional (copy, equality): for a large member most objects leave
// empty, which std::optional would make every object pay for in full (a
// journal's sandbox record and its rarely refused intent).
#pragma once

#include <memory>
#include <utility>

namespace fk::domain {

template <class T>
class HeapOptional {
 public:
  HeapOptional() = default;
  HeapOptional(T value) : value_(std::make_unique<T>(std::move(value))) {}  // NOLINT: as optional
  HeapOptional(const HeapOptional& o)
      : value_(o.value_ ? std::make_unique<T>(*o.value_) : nullptr) {}
  HeapOptional(HeapOptional&&) noexcept = default;
  HeapOptional& operator=(const HeapOptional& o) {
    if (this != &o) value_ = o.value_ ? std::make_unique<T>(*o.value_) : nullptr;
    return *this;
  }
  HeapOptional& operator=(HeapOptional&&) noexcept = default;
  ~HeapOptional() = default;

  bool has_value() const { return value_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const T& operator*() const { return *value_; }
  T& operator*() { return *value_; }
  const T* operator->() const { return value_.get(); }
  T* operator->() { return value_.get(); }
  void reset() { value_.reset(); }

  friend bool operator==(const HeapOptional& a, const HeapOptional& b) {
    return a.value_ ? (b.value_ && *a.value_ == *b.value_) : !b.value_;
  }

 private:
  std::unique_ptr<T> value_;
};

}  // namespace fk::domain
