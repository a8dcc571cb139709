#include "sim/event_views.h"

#include <array>
#include <boost/json.hpp>
#include <utility>

namespace fk::sim {
namespace json = boost::json;

namespace {

// {events.k8s.io/v1 name, core/v1 name} for the fields whose names differ.
constexpr std::array<std::pair<const char*, const char*>, 7> kRenamed = {{
    {"note", "message"},
    {"regarding", "involvedObject"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
    {"reportingController", "reportingComponent"},
}};

void Rename(json::object& o, const char* from, const char* to) {
  auto it = o.find(from);
  if (it == o.end()) return;
  json::value v = std::move(it->value());
  o.erase(it);
  o[to] = std::move(v);
}

}  // namespace

bool IsCoreEventView(const ResourceKind& kind) {
  return kind.group.empty() && kind.plural == "events";
}

json::value CoreEventFromStored(json::value stored) {
  if (!stored.is_object()) return stored;
  json::object& o = stored.get_object();
  for (const auto& [v1, core] : kRenamed) Rename(o, v1, core);
  o["apiVersion"] = "v1";
  // As served by the API server: these are not omitempty in core/v1.
  if (!o.contains("involvedObject")) o["involvedObject"] = json::object{};
  if (!o.contains("source")) o["source"] = json::object{};
  if (!o.contains("firstTimestamp")) o["firstTimestamp"] = nullptr;
  if (!o.contains("lastTimestamp")) o["lastTimestamp"] = nullptr;
  return stored;
}

json::value StoredEventFromCore(json::value core) {
  if (!core.is_object()) return core;
  json::object& o = core.get_object();
  for (const auto& [v1, name] : kRenamed) Rename(o, name, v1);
  for (const char* key : {"deprecatedFirstTimestamp", "deprecatedLastTimestamp"}) {
    if (const json::value* v = o.if_contains(key); v && v->is_null()) o.erase(key);
  }
  if (const json::value* s = o.if_contains("deprecatedSource");
      s && s->is_object() && s->get_object().empty()) {
    o.erase("deprecatedSource");
  }
  o["apiVersion"] = "events.k8s.io/v1";
  return core;
}

bool IsEventSelectableField(const std::string& key) {
  static const std::array<const char*, 13> kFields = {"metadata.name",
                                                      "metadata.namespace",
                                                      "involvedObject.kind",
                                                      "involvedObject.name",
                                                      "involvedObject.namespace",
                                                      "involvedObject.uid",
                                                      "involvedObject.apiVersion",
                                                      "involvedObject.resourceVersion",
                                                      "involvedObject.fieldPath",
                                                      "reason",
                                                      "reportingComponent",
                                                      "source",
                                                      "type"};
  for (const char* f : kFields) {
    if (key == f) return true;
  }
  return false;
}

std::optional<std::string> EventFieldValue(const json::value& stored, const std::string& key) {
  // A selectable field is "a.b" or "a"; "source" selects source.component.
  // Unset fields select as "", as on the API server.
  const std::string path = key == "source" ? "source.component" : key;
  const json::value core = CoreEventFromStored(stored);
  const json::value* cur = &core;
  for (size_t start = 0; cur;) {
    const size_t dot = path.find('.', start);
    cur =
        cur->is_object() ? cur->get_object().if_contains(path.substr(start, dot - start)) : nullptr;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (!cur || !cur->is_string()) return std::string();
  return std::string(cur->get_string());
}

}  // namespace fk::sim
