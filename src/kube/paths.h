// The paths of the Kubernetes API, and the resources fencekeeper reads and
// writes: pure string work, no I/O, so every layer (the client, the
// simulator, the reconciler) names an API resource the same way.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "domain/observation.h"

namespace fk::kube {

// An API resource: /apis/GROUP/VERSION/PLURAL ("" group: the core /api/VERSION).
struct ResourceRef {
  std::string group;
  std::string version;
  std::string plural;
  bool namespaced = true;
};

// The resources fencekeeper uses, defined once.
ResourceRef SandboxResource(domain::ApiVersion version);  // agents.x-k8s.io
ResourceRef NetworkPolicyResource();                      // networking.k8s.io/v1
ResourceRef PodResource();                                // v1
ResourceRef LeaseResource();                              // coordination.k8s.io/v1
ResourceRef EventResource();                              // events.k8s.io/v1
ResourceRef NamespaceResource();                          // v1, cluster-scoped
// GROUP/VERSION ("v1" for the core group), as apiVersion fields spell it.
std::string ApiVersionOf(const ResourceRef& r);

// /api/v1/namespaces/NS/pods/NAME or /apis/GROUP/VERSION/namespaces/NS/PLURAL/NAME,
// the namespace and the name percent-encoded (PathSegment), so neither can
// add a segment, a query or a fragment. "" leaves a part out.
std::string ResourcePath(const std::string& group, const std::string& version,
                         const std::string& plural, const std::string& ns = "",
                         const std::string& name = "");
std::string ResourcePath(const ResourceRef& r, const std::string& ns = "",
                         const std::string& name = "");
// Why `ns`/`name` cannot name an object of the API: a namespace is a DNS-1123
// label, an object name a DNS-1123 subdomain ("" is not checked: a collection,
// or every namespace). Names read from the cluster or the journal are checked
// so that a name the API server would never have issued is never sent.
Status CheckObjectName(const std::string& ns, const std::string& name);
// ResourcePath after CheckObjectName: the path, or why there is none.
Result<std::string> ObjectPath(const ResourceRef& r, const std::string& ns,
                               const std::string& name);

// Percent-encodes one path segment per RFC 3986 (all but A-Z a-z 0-9 - . _ ~).
std::string PathSegment(std::string_view name);
// Percent-encodes a query parameter value (the same encoding).
std::string QueryEscape(const std::string& value);

}  // namespace fk::kube
