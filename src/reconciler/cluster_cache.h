// What the reconciler reads about the cluster between API calls: the
// sandboxes, the namespace fence policies and the boundary pods, as caches.
// In production the informers keep them (InformerCache); the deterministic
// simulation feeds a cache of its own, late and out of order on purpose.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kube/informer.h"
#include "reconciler/readiness.h"

namespace fk::reconciler {

enum class CacheKind { kSandboxes = 0, kPolicies = 1, kPods = 2 };

class ClusterCache {
 public:
  virtual ~ClusterCache() = default;
  virtual kube::ObjectPtr Get(CacheKind kind, const std::string& ns,
                              const std::string& name) const = 0;
  // Every cached object of a kind in `ns` ("" = every namespace).
  virtual std::vector<kube::ObjectPtr> List(CacheKind kind, const std::string& ns) const = 0;
  // Nothing is decided before every cache has synced: a half-filled cache
  // would look like missing fences and pods.
  virtual bool Synced() const = 0;
};

struct CacheScope {
  std::vector<std::string> namespaces;  // empty: all namespaces
  std::string selector;                 // sandboxes' label selector
  std::string sandbox_version = "v1beta1";
  kube::InformerOptions informer;  // backoff and time; namespace and selector are set per informer
};

// Objects skipped as undecodable so far by these informers, summed per
// resource plural ("sandboxes", "networkpolicies", "pods"; every kind present).
std::map<std::string, int> DecodeErrorTotals(
    const std::vector<std::unique_ptr<kube::Informer>>& informers);

// One readiness check, as /readyz?verbose lists them: "[+]<name> ok" or
// "[-]<name> not synced: <reason>".
// Per watched namespace (or one for all): a sandbox, a NetworkPolicy and a
// boundary-pod informer.
class InformerCache final : public ClusterCache {
 public:
  using Handler = std::function<void(CacheKind, const std::string& ns, const std::string& name)>;

  InformerCache(kube::ApiClient& client, const CacheScope& scope);
  // Register before Start: hears every change of every cached object.
  void Subscribe(Handler handler);
  void Start();
  void Stop();

  kube::ObjectPtr Get(CacheKind kind, const std::string& ns,
                      const std::string& name) const override;
  std::vector<kube::ObjectPtr> List(CacheKind kind, const std::string& ns) const override;
  bool Synced() const override;
  // One check per informer, in a stable order.
  std::vector<ReadinessCheck> Checks() const;
  const std::vector<std::unique_ptr<kube::Informer>>& informers() const { return informers_; }

 private:
  // index = 3 * namespace_index + kind
  std::vector<std::unique_ptr<kube::Informer>> informers_;
};

}  // namespace fk::reconciler
