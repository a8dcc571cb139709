// The resource kinds the simulator serves, with what discovery and the
// storage rules need to know about each.
#pragma once

#include <string>
#include <vector>

namespace fk::sim {

struct ResourceKind {
  std::string group;                  // "" for the core group
  std::vector<std::string> versions;  // served versions; versions[0] is the storage version
  std::string plural;
  std::string singular;
  std::string kind;
  std::vector<std::string> short_names;
  bool namespaced = true;
  bool status_subresource = false;
  bool custom = false;  // a CRD: PUT needs metadata.resourceVersion, DELETE answers a Status

  std::string ApiVersion(const std::string& version) const {
    return group.empty() ? version : group + "/" + version;
  }
  std::string GroupResource() const { return group.empty() ? plural : plural + "." + group; }
  bool Serves(const std::string& version) const;
};

const std::vector<ResourceKind>& Kinds();
const ResourceKind* FindKind(const std::string& group, const std::string& plural);
// The kind whose store holds `kind`'s objects: itself, except for core/v1
// Events, which are a view of the events.k8s.io/v1 ones (one store, two APIs).
const ResourceKind& StorageKind(const ResourceKind& kind);
const ResourceKind* FindKindByKind(const std::string& api_version, const std::string& kind);

}  // namespace fk::sim
