// What the reconciler reads about the cluster between API calls: the
// sandboxes, the namespace fence policies and the boundary pods, as caches of
// compact structs (kube/objects.h: only what decide() and the PATCH need, so
// a sandbox costs bytes, not its JSON). In production the informers keep them
// (InformerCache); the deterministic simulation feeds a cache of its own, late
// and out of order on purpose.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/compact_string.h"
#include "common/hash_multimap.h"
#include "kube/informer.h"
#include "kube/objects.h"
#include "reconciler/readiness.h"
#include "reconciler/reconciler.h"

namespace fk::reconciler {

enum class CacheKind { kSandboxes = 0, kPolicies = 1, kPods = 2 };

using SandboxPtr = kube::CachedRef<const kube::CachedSandbox>;
using PolicyPtr = kube::CachedRef<const kube::CachedPolicy>;
using PodPtr = kube::CachedRef<const kube::CachedPod>;

// Which sandboxes name a pod as their workload or supervisor pod, kept up to
// date as sandboxes change, so a pod event finds its sandboxes without reading
// every sandbox of the namespace (that was quadratic in a rollout). Keyed by a
// hash of (namespace, pod): a collision only adds a candidate, and candidates
// are checked against the cached sandbox. Most pods are named after their
// sandbox (the workload pod is the sandbox's name, the supervisor pod
// os-supervisor-<sandbox id> and the id is the name): for those only the
// hash is kept, 8 bytes, as the pod's name gives the sandbox's (a node
// holding the sandbox's name would be 100 bytes of every sandbox).
class PodIndex {
 public:
  // A sandbox changed from `before` to `after` (either null: added, deleted).
  void Update(const std::string& ns, const std::string& sandbox, const kube::CachedSandbox* before,
              const kube::CachedSandbox* after);
  std::vector<std::string> Candidates(const std::string& ns, const std::string& pod) const;
  size_t size() const;  // one entry per pod each sandbox names

 private:
  void Add(const std::string& ns, const std::string& sandbox, const std::string& pod);
  void Remove(const std::string& ns, const std::string& sandbox, const std::string& pod);

  mutable std::mutex mu_;
  HashMultiset named_after_sandbox_;  // hash(ns, pod, how the name gives the sandbox's)
  std::unordered_multimap<size_t, CompactString> sandboxes_;  // hash(ns, pod) -> sandbox name
};

class ClusterCache {
 public:
  virtual ~ClusterCache() = default;
  virtual SandboxPtr Sandbox(const std::string& ns, const std::string& name) const = 0;
  // Every cached sandbox's key in `ns` ("" = every namespace).
  virtual std::vector<ObjectKey> SandboxKeys(const std::string& ns) const = 0;
  // Every NetworkPolicy of a watched namespace is cached (the effective
  // fence reads them all); null when there is none of that name.
  virtual PolicyPtr Policy(const std::string& ns, const std::string& name) const = 0;
  // Every cached NetworkPolicy of `ns`, by name.
  virtual std::vector<std::pair<std::string, PolicyPtr>> Policies(const std::string& ns) const = 0;
  virtual PodPtr Pod(const std::string& ns, const std::string& name) const = 0;
  // How many objects of a kind each namespace holds.
  virtual std::map<std::string, size_t> CountByNamespace(CacheKind kind) const = 0;
  // Nothing is decided before every cache has synced: a half-filled cache
  // would look like missing fences and pods.
  virtual bool Synced() const = 0;

  // The sandboxes of `ns` that name `pod` (through the index: O(1), not
  // O(sandboxes in the namespace)).
  std::vector<std::string> SandboxesNamingPod(const std::string& ns, const std::string& pod) const;

 protected:
  virtual const PodIndex& pod_index() const = 0;
};

struct CacheScope {
  std::vector<std::string> namespaces;  // empty: all namespaces
  std::string selector;                 // sandboxes' label selector
  domain::ApiVersion sandbox_version = domain::ApiVersion::kV1beta1;
  kube::InformerOptions informer;  // backoff and time; namespace and selector are set per informer
  int boundary_port = domain::kDefaultBoundaryPort;  // what an intact workload fence admits
};

// Objects skipped as undecodable so far by these informers, summed per
// resource plural ("sandboxes", "networkpolicies", "pods"; every kind present).
std::map<std::string, int> DecodeErrorTotals(
    const std::vector<std::unique_ptr<kube::Informer>>& informers);

// Per watched namespace (or one for all): a sandbox, a NetworkPolicy and a
// boundary-pod informer, each keeping the compact structs only.
class InformerCache final : public ClusterCache {
 public:
  using Handler = std::function<void(CacheKind, const std::string& ns, const std::string& name)>;

  InformerCache(kube::ApiClient& client, const CacheScope& scope);
  // Register before Start: hears every change of every cached object.
  void Subscribe(const Handler& handler);
  void Start();
  void Stop();

  SandboxPtr Sandbox(const std::string& ns, const std::string& name) const override;
  std::vector<ObjectKey> SandboxKeys(const std::string& ns) const override;
  PolicyPtr Policy(const std::string& ns, const std::string& name) const override;
  std::vector<std::pair<std::string, PolicyPtr>> Policies(const std::string& ns) const override;
  PodPtr Pod(const std::string& ns, const std::string& name) const override;
  std::map<std::string, size_t> CountByNamespace(CacheKind kind) const override;
  bool Synced() const override;
  // One check per informer, in a stable order.
  std::vector<ReadinessCheck> Checks() const;
  const std::vector<std::unique_ptr<kube::Informer>>& informers() const { return informers_; }

 private:
  const PodIndex& pod_index() const override { return index_; }
  kube::CachedPtr Get(CacheKind kind, const std::string& ns, const std::string& name) const;
  void Add(CacheKind kind, std::unique_ptr<kube::Informer> informer);
  const std::vector<kube::Informer*>& Of(CacheKind kind) const {
    return by_kind_[static_cast<size_t>(kind)];
  }

  std::vector<std::unique_ptr<kube::Informer>>
      informers_;                                        // per namespace: sandboxes, policies, pods
  std::array<std::vector<kube::Informer*>, 3> by_kind_;  // the same, by CacheKind
  PodIndex index_;
};

}  // namespace fk::reconciler
