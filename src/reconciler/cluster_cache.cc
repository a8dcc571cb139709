#include "reconciler/cluster_cache.h"

#include <algorithm>
#include <optional>

#include "common/namespaced_name.h"

namespace fk::reconciler {
namespace {

// The pod names a sandbox gives (none when it does not parse).
std::vector<std::string> PodsOf(const std::string& sandbox, const kube::CachedSandbox* sb) {
  return sb ? sb->Pods(sandbox) : std::vector<std::string>{};
}

// How a pod's name gives its sandbox's, if it does: the pod is named as the
// sandbox, or is the supervisor pod of a sandbox whose id is its name.
enum class NamedAfter { kNot, kSameName, kSupervisorOf };

NamedAfter HowNamed(const std::string& sandbox, const std::string& pod) {
  if (pod == sandbox) return NamedAfter::kSameName;
  const std::string_view prefix = kube::kSupervisorPodPrefix;
  if (pod.size() == prefix.size() + sandbox.size() && pod.starts_with(prefix) &&
      pod.ends_with(sandbox))
    return NamedAfter::kSupervisorOf;
  return NamedAfter::kNot;
}

uint64_t NamedAfterHash(const std::string& ns, const std::string& pod, NamedAfter how) {
  return HashOfName(ns, pod) ^ (how == NamedAfter::kSupervisorOf ? 0x9e3779b97f4a7c15ULL : 0);
}

}  // namespace

void PodIndex::Add(const std::string& ns, const std::string& sandbox, const std::string& pod) {
  const NamedAfter how = HowNamed(sandbox, pod);
  if (how != NamedAfter::kNot) {
    named_after_sandbox_.Insert(NamedAfterHash(ns, pod, how));
  } else {
    sandboxes_.emplace(HashOfName(ns, pod), CompactString(sandbox));
  }
}

void PodIndex::Remove(const std::string& ns, const std::string& sandbox, const std::string& pod) {
  const NamedAfter how = HowNamed(sandbox, pod);
  if (how != NamedAfter::kNot) {
    named_after_sandbox_.Erase(NamedAfterHash(ns, pod, how));
    return;
  }
  auto [first, last] = sandboxes_.equal_range(HashOfName(ns, pod));
  auto it = std::find_if(first, last, [&](const auto& e) { return e.second == sandbox; });
  if (it != last) sandboxes_.erase(it);
}

void PodIndex::Update(const std::string& ns, const std::string& sandbox,
                      const kube::CachedSandbox* before, const kube::CachedSandbox* after) {
  std::lock_guard lock(mu_);
  for (const std::string& pod : PodsOf(sandbox, before)) Remove(ns, sandbox, pod);
  for (const std::string& pod : PodsOf(sandbox, after)) Add(ns, sandbox, pod);
}

std::vector<std::string> PodIndex::Candidates(const std::string& ns, const std::string& pod) const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  if (named_after_sandbox_.Count(NamedAfterHash(ns, pod, NamedAfter::kSameName)) > 0)
    out.push_back(pod);
  const std::string_view prefix = kube::kSupervisorPodPrefix;
  if (pod.starts_with(prefix) &&
      named_after_sandbox_.Count(NamedAfterHash(ns, pod, NamedAfter::kSupervisorOf)) > 0)
    out.push_back(pod.substr(prefix.size()));
  auto [first, last] = sandboxes_.equal_range(HashOfName(ns, pod));
  for (auto it = first; it != last; ++it) out.push_back(it->second.str());
  return out;
}

size_t PodIndex::size() const {
  std::lock_guard lock(mu_);
  return named_after_sandbox_.size() + sandboxes_.size();
}

std::vector<std::string> ClusterCache::SandboxesNamingPod(const std::string& ns,
                                                          const std::string& pod) const {
  std::vector<std::string> out;
  for (std::string& name : pod_index().Candidates(ns, pod)) {
    SandboxPtr sb = Sandbox(ns, name);
    if (sb && sb->Names(name, pod) && std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(std::move(name));
  }
  return out;
}

InformerCache::InformerCache(kube::ApiClient& client, const CacheScope& scope) {
  std::vector<std::string> namespaces = scope.namespaces;
  if (namespaces.empty()) namespaces.push_back("");
  const domain::ApiVersion version = scope.sandbox_version;
  const int port = scope.boundary_port;
  for (const std::string& ns : namespaces) {
    kube::InformerOptions o = scope.informer;
    o.ns = ns;
    o.label_selector = scope.selector;
    o.transform = [version](const kube::DecodedObject& d) {
      return kube::CompactSandbox(d, version);
    };
    Add(CacheKind::kSandboxes,
        std::make_unique<kube::Informer>(client, kube::SandboxResource(version), o));
    // Every NetworkPolicy of the namespace: the fences, and every other
    // policy that may widen them (docs/design.md#the-effective-fence).
    o.label_selector.clear();
    o.transform = [port](const kube::DecodedObject& d) { return kube::CompactPolicy(d, port); };
    Add(CacheKind::kPolicies,
        std::make_unique<kube::Informer>(client, kube::NetworkPolicyResource(), o));
    o.label_selector =
        "openshell.ai/boundary-role";  // only the boundary pods, not every pod of the namespace
    o.transform = [](const kube::DecodedObject& d) { return kube::CompactPod(d); };
    Add(CacheKind::kPods, std::make_unique<kube::Informer>(client, kube::PodResource(), o));
  }
  // First subscriber: the index is current before any handler hears the change.
  for (kube::Informer* sandboxes : Of(CacheKind::kSandboxes)) {
    sandboxes->Subscribe([this](const kube::Change& c) {
      const auto* before = kube::As<kube::CachedSandbox>(c.previous.get());
      const auto* after = c.type == kube::ChangeType::kDeleted
                              ? nullptr
                              : kube::As<kube::CachedSandbox>(c.object.get());
      index_.Update(c.ns, c.name, before, after);
    });
  }
}

void InformerCache::Add(CacheKind kind, std::unique_ptr<kube::Informer> informer) {
  by_kind_[static_cast<size_t>(kind)].push_back(informer.get());
  informers_.push_back(std::move(informer));
}

void InformerCache::Subscribe(const Handler& handler) {
  for (CacheKind kind : {CacheKind::kSandboxes, CacheKind::kPolicies, CacheKind::kPods}) {
    for (kube::Informer* informer : Of(kind))
      informer->Subscribe([kind, handler](const kube::Change& c) { handler(kind, c.ns, c.name); });
  }
}

void InformerCache::Start() {
  for (auto& i : informers_) i->Start();
}

void InformerCache::Stop() {
  for (auto& i : informers_) i->Stop();
}

kube::CachedPtr InformerCache::Get(CacheKind kind, const std::string& ns,
                                   const std::string& name) const {
  for (const kube::Informer* informer : Of(kind)) {
    if (auto obj = informer->store().Get(ns, name)) return obj;
  }
  return nullptr;
}

SandboxPtr InformerCache::Sandbox(const std::string& ns, const std::string& name) const {
  return kube::As<kube::CachedSandbox>(Get(CacheKind::kSandboxes, ns, name));
}

PolicyPtr InformerCache::Policy(const std::string& ns, const std::string& name) const {
  return kube::As<kube::CachedPolicy>(Get(CacheKind::kPolicies, ns, name));
}

std::vector<std::pair<std::string, PolicyPtr>> InformerCache::Policies(
    const std::string& ns) const {
  std::vector<std::pair<std::string, PolicyPtr>> out;
  for (const kube::Informer* informer : Of(CacheKind::kPolicies)) {
    std::vector<std::string> names;
    informer->store().ForEachKey(ns,
                                 [&](const NamespacedName& k) { names.push_back(k.name.str()); });
    for (std::string& name : names) {
      // Gone between the two looks: the next event re-evaluates the namespace.
      if (PolicyPtr p = kube::As<kube::CachedPolicy>(informer->store().Get(ns, name)))
        out.emplace_back(std::move(name), std::move(p));
    }
  }
  return out;
}

PodPtr InformerCache::Pod(const std::string& ns, const std::string& name) const {
  return kube::As<kube::CachedPod>(Get(CacheKind::kPods, ns, name));
}

std::vector<ObjectKey> InformerCache::SandboxKeys(const std::string& ns) const {
  const auto informers = Of(CacheKind::kSandboxes);
  size_t cached = 0;
  for (const kube::Informer* sandboxes : informers) cached += sandboxes->store().size();
  std::vector<ObjectKey> out;
  out.reserve(ns.empty() ? cached : 0);  // one allocation for a resync of every sandbox
  for (const kube::Informer* sandboxes : informers) {
    sandboxes->store().ForEachKey(ns, [&](const NamespacedName& k) {
      out.push_back({k.ns.str(), k.name.str()});
    });
  }
  return out;
}

std::map<std::string, size_t> InformerCache::CountByNamespace(CacheKind kind) const {
  std::map<std::string, size_t> out;
  for (const kube::Informer* informer : Of(kind)) {
    // Counted by runs of one namespace: no string per object.
    std::optional<CompactString> ns;
    size_t* count = nullptr;
    informer->store().ForEachKey("", [&](const NamespacedName& k) {
      if (!ns || k.ns != *ns) count = &out[(ns = k.ns)->str()];
      ++*count;
    });
  }
  return out;
}

std::vector<ReadinessCheck> InformerCache::Checks() const {
  std::vector<ReadinessCheck> out;
  for (const auto& i : informers_) {
    kube::SyncState s = i->sync_state();
    out.push_back({"informer " + i->Name(), s.synced, s.synced ? "" : "not synced: " + s.reason});
  }
  return out;
}

std::map<std::string, int> DecodeErrorTotals(
    const std::vector<std::unique_ptr<kube::Informer>>& informers) {
  std::map<std::string, int> out{{"sandboxes", 0}, {"networkpolicies", 0}, {"pods", 0}};
  for (const auto& i : informers) out[i->resource().plural] += i->stats().decode_errors;
  return out;
}

bool InformerCache::Synced() const {
  for (const auto& i : informers_) {
    if (!i->HasSynced()) return false;
  }
  return true;
}

}  // namespace fk::reconciler
