// An iterative JSON reader (RFC 8259): one token at a time into a sink, with
// the nesting kept in a vector, so a document 10,000 (or a million) levels
// deep costs heap, not C++ stack. Boost.JSON's own parser is a recursive
// descent (basic_parser::parse_object calls parse_value calls parse_object),
// which overflows a thread's stack at a few thousand levels under ASan; this
// reader replaces it for everything that comes off the wire (kube/json.h).
//
// Lenient where the API server's decoder is: invalid UTF-8 in strings passes
// through, a lone surrogate escape becomes U+FFFD, duplicate keys are the
// sink's business. Strict where JSON is: control characters inside strings,
// leading zeros, trailing garbage and numbers beyond double are errors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace fk::kube {

// Receives the tokens of one document; returning false stops the reader.
class JsonSink {
 public:
  virtual ~JsonSink() = default;
  virtual bool Begin(bool object) = 0;
  // `size`: the container's elements (pairs, for an object).
  virtual bool End(bool object, size_t size) = 0;
  virtual bool Key(std::string_view key) = 0;
  virtual bool String(std::string_view s) = 0;
  virtual bool Int64(int64_t v) = 0;
  virtual bool Uint64(uint64_t v) = 0;
  virtual bool Double(double v) = 0;
  virtual bool Bool(bool v) = 0;
  virtual bool Null() = 0;
};

// Reads exactly one document from `text`. `max_depth`: the deepest nesting
// of arrays/objects allowed ({} is 1; 0: no limit). An InvalidArgument
// error says what went wrong and where ("too deep: more than 10000 levels at
// byte 12").
Status ReadJson(std::string_view text, JsonSink& sink, size_t max_depth);

}  // namespace fk::kube
