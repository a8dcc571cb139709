#include "kube/paths.h"

#include <cctype>

#include "domain/dns_names.h"

namespace fk::kube {
namespace {

// RFC 3986: everything but the unreserved characters is percent-encoded.
std::string PercentEncode(std::string_view v) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : v) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace

ResourceRef SandboxResource(domain::ApiVersion version) {
  return {"agents.x-k8s.io", domain::ToString(version), "sandboxes", true};
}
ResourceRef NetworkPolicyResource() { return {"networking.k8s.io", "v1", "networkpolicies", true}; }
ResourceRef PodResource() { return {"", "v1", "pods", true}; }
ResourceRef LeaseResource() { return {"coordination.k8s.io", "v1", "leases", true}; }
ResourceRef EventResource() { return {"events.k8s.io", "v1", "events", true}; }
ResourceRef NamespaceResource() { return {"", "v1", "namespaces", false}; }

std::string ApiVersionOf(const ResourceRef& r) {
  return r.group.empty() ? r.version : r.group + "/" + r.version;
}

std::string PathSegment(std::string_view name) { return PercentEncode(name); }

std::string QueryEscape(const std::string& v) { return PercentEncode(v); }

std::string ResourcePath(const std::string& group, const std::string& version,
                         const std::string& plural, const std::string& ns,
                         const std::string& name) {
  std::string p = group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  if (!ns.empty()) p += "/namespaces/" + PathSegment(ns);
  p += "/" + plural;
  if (!name.empty()) p += "/" + PathSegment(name);
  return p;
}

Status CheckObjectName(const std::string& ns, const std::string& name) {
  if (!ns.empty() && !domain::IsDns1123Label(ns))
    return Status::InvalidArgument("namespace '" + ns + "' is not a DNS-1123 label");
  if (!name.empty() && !domain::IsDns1123Subdomain(name))
    return Status::InvalidArgument("name '" + name + "' is not a DNS-1123 subdomain");
  return Status::Ok();
}

std::string ResourcePath(const ResourceRef& r, const std::string& ns, const std::string& name) {
  return ResourcePath(r.group, r.version, r.plural, ns, name);
}

Result<std::string> ObjectPath(const ResourceRef& r, const std::string& ns,
                               const std::string& name) {
  if (Status s = CheckObjectName(ns, name); !s.ok()) return s;
  return ResourcePath(r, ns, name);
}

}  // namespace fk::kube
