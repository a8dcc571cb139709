#include "sim/resources.h"

#include <algorithm>

namespace fk::sim {

bool ResourceKind::Serves(const std::string& version) const {
  return std::find(versions.begin(), versions.end(), version) != versions.end();
}

const std::vector<ResourceKind>& Kinds() {
  static const std::vector<ResourceKind> kKinds = {
      {"agents.x-k8s.io",
       {"v1beta1", "v1alpha1"},
       "sandboxes",
       "sandbox",
       "Sandbox",
       {"sandbox"},
       true,
       true,
       true},
      {"networking.k8s.io",
       {"v1"},
       "networkpolicies",
       "networkpolicy",
       "NetworkPolicy",
       {"netpol"},
       true,
       false,
       false},
      {"", {"v1"}, "pods", "pod", "Pod", {"po"}, true, true, false},
      {"", {"v1"}, "namespaces", "namespace", "Namespace", {"ns"}, false, true, false},
      {"coordination.k8s.io", {"v1"}, "leases", "lease", "Lease", {}, true, false, false},
      {"events.k8s.io", {"v1"}, "events", "event", "Event", {"ev"}, true, false, false},
      // The core/v1 view of the same Events (sim/event_views.h).
      {"", {"v1"}, "events", "event", "Event", {"ev"}, true, false, false},
  };
  return kKinds;
}

const ResourceKind* FindKind(const std::string& group, const std::string& plural) {
  for (const auto& k : Kinds()) {
    if (k.group == group && k.plural == plural) return &k;
  }
  return nullptr;
}

const ResourceKind& StorageKind(const ResourceKind& kind) {
  if (kind.group.empty() && kind.plural == "events") return *FindKind("events.k8s.io", "events");
  return kind;
}

const ResourceKind* FindKindByKind(const std::string& api_version, const std::string& kind) {
  const auto slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  const std::string version =
      slash == std::string::npos ? api_version : api_version.substr(slash + 1);
  for (const auto& k : Kinds()) {
    if (k.group == group && k.kind == kind && k.Serves(version)) return &k;
  }
  return nullptr;
}

}  // namespace fk::sim
