#include "kube/sandbox_api.h"

#include <boost/json.hpp>

#include "kube/json_fields.h"
#include "kube/paths.h"

namespace fk::kube {
namespace json = boost::json;

Result<std::string> SandboxPath(domain::ApiVersion version, const std::string& ns,
                                const std::string& name) {
  return ObjectPath(SandboxResource(version), ns, name);
}

std::string SuspendPatchBody(const SuspendPatch& p) {
  json::object patch{{"metadata",
                      {{"resourceVersion", p.resource_version},
                       {"annotations",
                        {{kReadinessAnnotation, "unavailable"},
                         {kReasonAnnotation, p.reason},
                         {kSeqAnnotation, std::to_string(p.mark.seq)},
                         {kWriterAnnotation, p.mark.writer}}}}}};
  if (p.api_version == domain::ApiVersion::kV1alpha1) {
    patch["spec"] = {{"replicas", 0}};
  } else {
    patch["spec"] = {{"operatingMode", "Suspended"}};
  }
  return json::serialize(patch);
}

ObjectPtr ParseObject(std::string_view body) {
  auto v = ParseJson(body, "object");
  return v.ok() && (*v)->is_object() ? *v : nullptr;
}

std::optional<int64_t> GenerationOf(std::string_view body) {
  ObjectPtr obj = ParseObject(body);
  const json::object* meta = obj ? ObjectField(*obj, "metadata") : nullptr;
  const json::value* g = meta ? meta->if_contains("generation") : nullptr;
  if (g && g->is_int64()) return g->as_int64();
  return std::nullopt;
}

std::string UidOf(std::string_view body) {
  ObjectPtr obj = ParseObject(body);
  return obj ? MetadataString(*obj, "uid") : "";
}

}  // namespace fk::kube
