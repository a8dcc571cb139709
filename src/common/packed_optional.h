// An optional value the size of the value: "absent" is one value the type
// never takes (its niche), where std::optional adds a flag and its padding.
// For members kept once per sandbox by the ten thousand (a journal record's
// suspend history and decision): an std::optional<int64_t> is 16 bytes, this
// is 8. Reads and writes as std::optional does, and converts to and from it.
//
// A type opts in by specializing Niche<T> with None() and IsNone(); storing
// the niche value itself is a programming error (it would read as absent),
// which the specializations document as impossible for their values.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <utility>

namespace fk {

template <class T>
struct Niche;

// Sequence numbers, generations and times in milliseconds: never the most
// negative int64 (a generation is parsed as a non-negative number, seqs and
// times are positive).
template <>
struct Niche<int64_t> {
  static constexpr int64_t None() { return std::numeric_limits<int64_t>::min(); }
  static constexpr bool IsNone(int64_t v) { return v == None(); }
};

template <class T>
class PackedOptional {
 public:
  constexpr PackedOptional() : value_(Niche<T>::None()) {}
  constexpr PackedOptional(std::nullopt_t) : PackedOptional() {}   // NOLINT: as optional
  constexpr PackedOptional(T value) : value_(std::move(value)) {}  // NOLINT: as optional
  constexpr PackedOptional(const std::optional<T>& o)              // NOLINT: as optional
      : value_(o ? *o : Niche<T>::None()) {}
  constexpr operator std::optional<T>() const {  // NOLINT: reads as an optional
    return has_value() ? std::optional<T>(value_) : std::nullopt;
  }

  constexpr bool has_value() const { return !Niche<T>::IsNone(value_); }
  constexpr explicit operator bool() const { return has_value(); }
  constexpr const T& operator*() const { return value_; }
  constexpr T& operator*() { return value_; }
  constexpr const T* operator->() const { return &value_; }
  constexpr T* operator->() { return &value_; }
  constexpr const T& value() const {
    if (!has_value()) throw std::bad_optional_access();
    return value_;
  }
  constexpr T value_or(T other) const { return has_value() ? value_ : std::move(other); }
  constexpr void reset() { value_ = Niche<T>::None(); }

  friend constexpr bool operator==(const PackedOptional& a, const PackedOptional& b) {
    return a.has_value() == b.has_value() && (!a.has_value() || a.value_ == b.value_);
  }
  // Exact overloads, so that std::optional's own `optional == U` template
  // (which would call two absent values unequal) is never chosen.
  friend constexpr bool operator==(const PackedOptional& a, const std::optional<T>& b) {
    return a == PackedOptional(b);
  }
  friend constexpr bool operator==(const std::optional<T>& a, const PackedOptional& b) {
    return PackedOptional(a) == b;
  }
  friend constexpr bool operator==(const PackedOptional& a, const T& b) {
    return a.has_value() && a.value_ == b;
  }
  friend constexpr bool operator==(const PackedOptional& a, std::nullopt_t) {
    return !a.has_value();
  }
  friend std::ostream& operator<<(std::ostream& out, const PackedOptional& o) {
    if (!o.has_value()) return out << "(nullopt)";
    if constexpr (requires { out << o.value_; }) {
      return out << o.value_;
    } else {
      return out << "(value)";
    }
  }

 private:
  T value_;
};

static_assert(sizeof(PackedOptional<int64_t>) == 8);

}  // namespace fk
