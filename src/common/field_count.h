// How many fields an aggregate has, at compile time: for the places that must
// list every field of a type (hashing it, packing it), so that a field added
// later fails to compile there instead of being silently left out. Counting
// fields catches even one that fits in padding, which a sizeof guard misses.
#pragma once

#include <cstddef>
#include <utility>

namespace fk::field_count {

// Declared only: used in unevaluated contexts. Not in an anonymous namespace,
// so that its undefined conversion is not an internal one.
struct AnyValue {
  template <class T>
  operator T() const;  // NOLINT: converts to any field's type, never called
};

template <class T, size_t... I>
constexpr bool InitializableWith(std::index_sequence<I...>) {
  return requires { T{(void(I), AnyValue{})...}; };
}

template <class T, size_t N = 0>
constexpr size_t FieldCount() {
  if constexpr (InitializableWith<T>(std::make_index_sequence<N + 1>{})) {
    return FieldCount<T, N + 1>();
  } else {
    return N;
  }
}

}  // namespace fk::field_count
