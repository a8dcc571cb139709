#include "sim/table.h"

#include <boost/json.hpp>
#include <cstdio>
#include <ctime>

#include "kube/json_fields.h"
#include "kube/objects.h"

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

std::string Age(const json::value& object, WallTime now) {
  const std::string created = kube::MetadataString(object, "creationTimestamp");
  std::tm tm{};
  if (std::sscanf(created.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6) {
    return "<unknown>";
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const auto then = std::chrono::system_clock::from_time_t(timegm(&tm));
  return HumanAge(std::chrono::duration_cast<std::chrono::seconds>(now - then));
}

json::array Row(const json::value& object, WallTime now) {
  const json::object* annotations =
      kube::ObjectField(kube::ObjectField(object, "metadata"), "annotations");
  return json::array{
      json::string(kube::MetadataString(object, "name")), json::string(Mode(object)),
      json::string(kube::StringField(annotations, kube::kFenceGenerationAnnotation).value_or("")),
      json::string(Age(object, now))};
}

}  // namespace

bool WantsTable(std::string_view accept) {
  return accept.find("as=Table") != std::string_view::npos &&
         accept.find("g=meta.k8s.io") != std::string_view::npos;
}

bool HasPrinterColumns(const ResourceKind& kind) { return kind.plural == "sandboxes"; }

json::array PrinterColumns(const ResourceKind& kind) {
  if (!HasPrinterColumns(kind)) return {};
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

json::value Table(const std::vector<json::value>& objects, const std::string& resource_version,
                  WallTime now) {
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
  json::array rows;
  for (const json::value& o : objects) {
    json::value meta =
        o.is_object() && o.as_object().contains("metadata") ? o.at("metadata") : json::object{};
    rows.push_back({{"cells", Row(o, now)},
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
  if (h < 24 * 8) return fmt(d, "d", h % 24, "h");
  if (d < 365 * 2) return std::to_string(d) + "d";
  if (d < 365 * 8) return fmt(d / 365, "y", d % 365, "d");
  return std::to_string(d / 365) + "y";
}

}  // namespace fk::sim
