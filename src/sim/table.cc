#include "sim/table.h"

#include <boost/json.hpp>
#include <cctype>
#include <cstdio>
#include <ctime>

#include "kube/json_fields.h"
#include "kube/objects.h"
#include "sim/event_views.h"

namespace fk::sim {
namespace json = boost::json;

namespace {

// The sandbox's mode: spec.operatingMode (v1beta1) or, from v1alpha1's
// spec.replicas, Suspended for 0 and Running otherwise.
std::string Mode(const json::value& sandbox) {
  const json::object* spec = kube::ObjectField(sandbox, "spec");
  if (auto mode = kube::StringField(spec, "operatingMode")) return *mode;
  const json::value* replicas = spec ? spec->if_contains("replicas") : nullptr;
  if (replicas && replicas->is_int64()) return replicas->get_int64() <= 0 ? "Suspended" : "Running";
  return "";
}

// The age of an RFC 3339 timestamp (fractional seconds ignored) at `now`.
std::string AgeOf(const std::string& timestamp, WallTime now) {
  std::tm tm{};
  if (std::sscanf(timestamp.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6) {
    return "<unknown>";
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const auto then = std::chrono::system_clock::from_time_t(timegm(&tm));
  return HumanAge(std::chrono::duration_cast<std::chrono::seconds>(now - then));
}

std::string Age(const json::value& object, WallTime now) {
  return AgeOf(kube::MetadataString(object, "creationTimestamp"), now);
}

json::array SandboxRow(const json::value& object, WallTime now) {
  const json::object* annotations =
      kube::ObjectField(kube::ObjectField(object, "metadata"), "annotations");
  return json::array{
      json::string(kube::MetadataString(object, "name")), json::string(Mode(object)),
      json::string(kube::StringField(annotations, kube::kFenceGenerationAnnotation).value_or("")),
      json::string(Age(object, now))};
}

// A core/v1 Event as `kubectl get events` shows it: last seen (series,
// lastTimestamp or eventTime), type, reason, kind/name of the object, message.
json::array EventRow(const json::value& event, WallTime now) {
  const json::object* o = event.is_object() ? &event.get_object() : nullptr;
  const json::object* series = kube::ObjectField(o, "series");
  std::string seen = kube::StringField(series, "lastObservedTime").value_or("");
  if (seen.empty()) seen = kube::StringField(o, "lastTimestamp").value_or("");
  if (seen.empty()) seen = kube::StringField(o, "eventTime").value_or("");
  const json::object* involved = kube::ObjectField(o, "involvedObject");
  std::string kind = kube::StringField(involved, "kind").value_or("");
  for (char& ch : kind) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return json::array{json::string(AgeOf(seen, now)),
                     json::string(kube::StringField(o, "type").value_or("")),
                     json::string(kube::StringField(o, "reason").value_or("")),
                     json::string(kind + "/" + kube::StringField(involved, "name").value_or("")),
                     json::string(kube::StringField(o, "message").value_or("")),
                     json::string(kube::MetadataString(event, "name"))};
}

json::array EventColumns() {
  json::array columns;
  for (const char* name : {"Last Seen", "Type", "Reason", "Object", "Message", "Name"}) {
    const bool is_name = std::string_view(name) == "Name";
    columns.push_back({{"name", name},
                       {"type", "string"},
                       {"format", is_name ? "name" : ""},
                       {"description", ""},
                       {"priority", is_name ? 1 : 0}});  // -o wide shows the name
  }
  return columns;
}

}  // namespace

bool WantsTable(std::string_view accept) {
  return accept.find("as=Table") != std::string_view::npos &&
         accept.find("g=meta.k8s.io") != std::string_view::npos;
}

bool HasPrinterColumns(const ResourceKind& kind) {
  return kind.plural == "sandboxes" || IsCoreEventView(kind);
}

json::array PrinterColumns(const ResourceKind& kind) {
  if (kind.plural != "sandboxes") return {};
  return json::array{
      {{"name", "Mode"},
       {"type", "string"},
       {"jsonPath", ".spec.operatingMode"},
       {"description", "Running or Suspended (v1alpha1: spec.replicas 1 or 0)"}},
      {{"name", "Fence"},
       {"type", "string"},
       {"jsonPath", std::string(".metadata.annotations.") + kube::kFenceGenerationAnnotation},
       {"description", "The fence generation the sandbox was started under"}},
      {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}}};
}

namespace {

json::array SandboxColumns() {
  json::array columns{{{"name", "Name"},
                       {"type", "string"},
                       {"format", "name"},
                       {"description", "Name must be unique within a namespace."},
                       {"priority", 0}}};
  for (const json::value& c : PrinterColumns(*FindKind("agents.x-k8s.io", "sandboxes"))) {
    columns.push_back({{"name", c.at("name")},
                       {"type", c.at("type")},
                       {"format", ""},
                       {"description", c.as_object().contains("description") ? c.at("description")
                                                                             : json::value("")},
                       {"priority", 0}});
  }
  return columns;
}

}  // namespace

json::value Table(const ResourceKind& kind, const std::vector<json::value>& objects,
                  const std::string& resource_version, WallTime now) {
  const bool events = IsCoreEventView(kind);
  json::array columns = events ? EventColumns() : SandboxColumns();
  json::array rows;
  for (const json::value& o : objects) {
    json::value meta =
        o.is_object() && o.as_object().contains("metadata") ? o.at("metadata") : json::object{};
    rows.push_back({{"cells", events ? EventRow(o, now) : SandboxRow(o, now)},
                    {"object",
                     {{"kind", "PartialObjectMetadata"},
                      {"apiVersion", "meta.k8s.io/v1"},
                      {"metadata", std::move(meta)}}}});
  }
  return json::object{{"kind", "Table"},
                      {"apiVersion", "meta.k8s.io/v1"},
                      {"metadata", {{"resourceVersion", resource_version}}},
                      {"columnDefinitions", std::move(columns)},
                      {"rows", std::move(rows)}};
}

std::string HumanAge(std::chrono::seconds age) {
  const long long s = age.count();
  auto fmt = [](long long big, const char* u1, long long small, const char* u2) {
    return std::to_string(big) + u1 + (small ? std::to_string(small) + u2 : "");
  };
  if (s < 0) return "0s";
  if (s < 120) return std::to_string(s) + "s";
  const long long m = s / 60, h = m / 60, d = h / 24;
  if (m < 10) return fmt(m, "m", s % 60, "s");
  if (m < 180) return std::to_string(m) + "m";
  if (h < 8) return fmt(h, "h", m % 60, "m");
  if (h < 48) return std::to_string(h) + "h";
  if (h < 24LL * 8) return fmt(d, "d", h % 24, "h");
  if (d < 365LL * 2) return std::to_string(d) + "d";
  if (d < 365LL * 8) return fmt(d / 365, "y", d % 365, "d");
  return std::to_string(d / 365) + "y";
}

}  // namespace fk::sim
