// A ClusterCache the test fills by hand: what the controller sees, decoupled
// from what the server holds, so a test (or the simulation's scheduler) can
// make it lag, reorder or drop changes on purpose. Objects are put as JSON and
// kept in the compact form the informers keep (the same transforms), with the
// same pod index.
#pragma once

#include <atomic>
#include <boost/json.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kube/json_fields.h"
#include "reconciler/cluster_cache.h"

namespace fk::testing {

class MapCache : public reconciler::ClusterCache {
 public:
  using Kind = reconciler::CacheKind;

  reconciler::SandboxPtr Sandbox(const std::string& ns, const std::string& name) const override {
    ++sandbox_reads_;
    return As<kube::CachedSandbox>(Kind::kSandboxes, ns, name);
  }
  std::vector<reconciler::ObjectKey> SandboxKeys(const std::string& ns) const override {
    auto keys = Keys(Kind::kSandboxes, ns);
    sandbox_reads_ += keys.size();
    return keys;
  }
  reconciler::PolicyPtr Policy(const std::string& ns, const std::string& name) const override {
    return As<kube::CachedPolicy>(Kind::kPolicies, ns, name);
  }
  std::vector<std::pair<std::string, reconciler::PolicyPtr>> Policies(
      const std::string& ns) const override {
    std::vector<std::pair<std::string, reconciler::PolicyPtr>> out;
    for (const auto& [key, obj] : objects_[static_cast<int>(Kind::kPolicies)]) {
      if (key.ns.str() == ns) out.emplace_back(key.name.str(), kube::As<kube::CachedPolicy>(obj));
    }
    return out;
  }
  reconciler::PodPtr Pod(const std::string& ns, const std::string& name) const override {
    return As<kube::CachedPod>(Kind::kPods, ns, name);
  }
  std::map<std::string, size_t> CountByNamespace(Kind kind) const override {
    std::map<std::string, size_t> out;
    for (const auto& [key, obj] : objects_[static_cast<int>(kind)]) ++out[key.ns.str()];
    return out;
  }
  bool Synced() const override { return true; }

  // Stores what the informer would keep of `obj` (null, or an object the
  // informer drops or cannot decode: forgets the object).
  void Put(Kind kind, const std::string& ns, const std::string& name, kube::ObjectPtr obj) {
    kube::CachedPtr cached;
    if (obj) {
      auto t = kube::Transformed(TransformOf(kind), std::move(obj));
      if (t.ok()) cached = std::move(*t);
    }
    auto& m = objects_[static_cast<int>(kind)];
    auto it = m.find({ns, name});
    if (kind == Kind::kSandboxes) {
      index_.Update(ns, name,
                    it == m.end() ? nullptr : kube::As<kube::CachedSandbox>(it->second.get()),
                    kube::As<kube::CachedSandbox>(cached.get()));
    }
    if (cached) {
      m[{ns, name}] = std::move(cached);
    } else if (it != m.end()) {
      m.erase(it);
    }
  }
  // Puts every item that `list(path)` (a JSON list, e.g. the simulator's
  // answer to a GET) holds for namespace `ns`'s sandboxes, pods and policies.
  template <class ListFn>
  void FillFrom(const std::string& ns, ListFn list) {
    const std::pair<Kind, std::string> kinds[] = {
        {Kind::kSandboxes, "/apis/agents.x-k8s.io/v1beta1/namespaces/" + ns + "/sandboxes"},
        {Kind::kPods, "/api/v1/namespaces/" + ns + "/pods"},
        {Kind::kPolicies, "/apis/networking.k8s.io/v1/namespaces/" + ns + "/networkpolicies"}};
    for (const auto& [kind, path] : kinds) {
      const boost::json::value items = list(path);
      for (const auto& item : items.at("items").as_array())
        Put(kind, ns, kube::MetadataString(item, "name"),
            std::make_shared<const boost::json::value>(item));
    }
  }

  void Clear(Kind kind) {
    for (const auto& [ns, name] : Keys(kind, "")) Put(kind, ns.str(), name.str(), nullptr);
  }
  std::vector<reconciler::ObjectKey> Keys(Kind kind, const std::string& ns) const {
    std::vector<reconciler::ObjectKey> out;
    for (const auto& [key, obj] : objects_[static_cast<int>(kind)]) {
      if (ns.empty() || key.ns == ns) out.push_back(key);
    }
    return out;
  }
  // Sandboxes read so far (one per Sandbox() call, one per key listed).
  size_t sandbox_reads() const { return sandbox_reads_; }
  size_t pod_index_size() const { return index_.size(); }

 private:
  const reconciler::PodIndex& pod_index() const override { return index_; }
  static kube::Transform TransformOf(Kind kind) {
    switch (kind) {
      case Kind::kSandboxes:
        return [](const kube::DecodedObject& d) {
          return kube::CompactSandbox(d, domain::ApiVersion::kV1beta1);
        };
      case Kind::kPolicies:
        return [](const kube::DecodedObject& d) {
          return kube::CompactPolicy(d, domain::kDefaultBoundaryPort);
        };
      default:
        return [](const kube::DecodedObject& d) { return kube::CompactPod(d); };
    }
  }
  template <class T>
  kube::CachedRef<const T> As(Kind kind, const std::string& ns, const std::string& name) const {
    const auto& m = objects_[static_cast<int>(kind)];
    auto it = m.find({ns, name});
    return it == m.end() ? nullptr : kube::As<T>(it->second);
  }

  std::map<reconciler::ObjectKey, kube::CachedPtr> objects_[3];
  reconciler::PodIndex index_;
  mutable std::atomic<size_t> sandbox_reads_{0};  // workers read concurrently
};

}  // namespace fk::testing
