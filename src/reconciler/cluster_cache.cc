#include "reconciler/cluster_cache.h"

namespace fk::reconciler {

InformerCache::InformerCache(kube::ApiClient& client, const CacheScope& scope) {
  std::vector<std::string> namespaces = scope.namespaces;
  if (namespaces.empty()) namespaces.push_back("");
  for (const std::string& ns : namespaces) {
    kube::InformerOptions o = scope.informer;
    o.ns = ns;
    o.label_selector = scope.selector;
    informers_.push_back(std::make_unique<kube::Informer>(
        client, kube::ResourceRef{"agents.x-k8s.io", scope.sandbox_version, "sandboxes", true}, o));
    o.label_selector.clear();
    informers_.push_back(std::make_unique<kube::Informer>(
        client, kube::ResourceRef{"networking.k8s.io", "v1", "networkpolicies", true}, o));
    o.label_selector =
        "openshell.ai/boundary-role";  // only the boundary pods, not every pod of the namespace
    informers_.push_back(
        std::make_unique<kube::Informer>(client, kube::ResourceRef{"", "v1", "pods", true}, o));
  }
}

void InformerCache::Subscribe(Handler handler) {
  for (size_t i = 0; i < informers_.size(); ++i) {
    const auto kind = static_cast<CacheKind>(i % 3);
    informers_[i]->Subscribe(
        [kind, handler](const kube::Change& c) { handler(kind, c.ns, c.name); });
  }
}

void InformerCache::Start() {
  for (auto& i : informers_) i->Start();
}

void InformerCache::Stop() {
  for (auto& i : informers_) i->Stop();
}

kube::ObjectPtr InformerCache::Get(CacheKind kind, const std::string& ns,
                                   const std::string& name) const {
  for (size_t i = static_cast<size_t>(kind); i < informers_.size(); i += 3) {
    if (auto obj = informers_[i]->store().Get(ns, name)) return obj;
  }
  return nullptr;
}

std::vector<kube::ObjectPtr> InformerCache::List(CacheKind kind, const std::string& ns) const {
  std::vector<kube::ObjectPtr> out;
  for (size_t i = static_cast<size_t>(kind); i < informers_.size(); i += 3) {
    for (auto& o : informers_[i]->store().List(ns)) out.push_back(std::move(o));
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
