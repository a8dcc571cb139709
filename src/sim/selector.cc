#include "sim/selector.h"

#include <boost/json.hpp>

#include "sim/event_views.h"

namespace fk::sim {
namespace json = boost::json;
namespace {

std::optional<std::string> StringAt(const json::value& v, const std::vector<std::string>& path) {
  const json::value* cur = &v;
  for (const auto& p : path) {
    if (!cur->is_object()) return std::nullopt;
    cur = cur->get_object().if_contains(p);
    if (!cur) return std::nullopt;
  }
  if (!cur->is_string()) return std::nullopt;
  return std::string(cur->get_string());
}

}  // namespace

std::optional<Selector> Selector::ParseLabels(const std::string& text) {
  auto parsed = domain::ParseLabelSelector(text);
  if (!parsed.ok()) return std::nullopt;
  Selector s;
  s.selector_ = std::move(*parsed);
  return s;
}

std::optional<Selector> Selector::ParseFields(const std::string& text, const ResourceKind* kind) {
  auto parsed = domain::ParseLabelSelector(text, /*validate=*/false);
  if (!parsed.ok()) return std::nullopt;
  using Op = domain::LabelRequirement::Op;
  const bool events = kind && StorageKind(*kind).group == "events.k8s.io";
  for (const auto& r : parsed->requirements) {
    const bool known = events ? IsEventSelectableField(r.key)
                              : r.key == "metadata.name" || r.key == "metadata.namespace";
    if (!known || (r.op != Op::kEquals && r.op != Op::kNotEquals)) return std::nullopt;
  }
  Selector s;
  s.fields_ = true;
  s.event_fields_ = events;
  s.selector_ = std::move(*parsed);
  return s;
}

bool Selector::Matches(const json::value& object) const {
  return selector_.Matches([&](const std::string& key) {
    if (event_fields_) return EventFieldValue(object, key);
    return fields_ ? StringAt(object, {"metadata", key.substr(9)})
                   : StringAt(object, {"metadata", "labels", key});
  });
}

}  // namespace fk::sim
