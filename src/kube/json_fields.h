// Reading fields of Kubernetes objects held as Boost.JSON values, where any
// field may be missing or of the wrong type: every accessor answers "absent"
// rather than throwing.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace fk::kube {

inline const boost::json::object* ObjectField(const boost::json::object* o, std::string_view key) {
  const boost::json::value* v = o ? o->if_contains(key) : nullptr;
  return v && v->is_object() ? &v->get_object() : nullptr;
}

inline const boost::json::object* ObjectField(const boost::json::value& v, std::string_view key) {
  return ObjectField(v.is_object() ? &v.get_object() : nullptr, key);
}

inline std::optional<std::string> StringField(const boost::json::object* o, std::string_view key) {
  const boost::json::value* v = o ? o->if_contains(key) : nullptr;
  if (!v || !v->is_string()) return std::nullopt;
  return std::string(v->get_string());
}

// metadata.<field> as a string, "" when absent.
inline std::string MetadataString(const boost::json::value& object, std::string_view field) {
  return StringField(ObjectField(object, "metadata"), field).value_or("");
}

}  // namespace fk::kube
