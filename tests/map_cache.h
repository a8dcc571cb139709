// A ClusterCache the test fills by hand: what the controller sees, decoupled
// from what the server holds, so a test (or the simulation's scheduler) can
// make it lag, reorder or drop changes on purpose.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "reconciler/cluster_cache.h"

namespace fk::testing {

class MapCache : public reconciler::ClusterCache {
 public:
  using Kind = reconciler::CacheKind;

  kube::ObjectPtr Get(Kind kind, const std::string& ns, const std::string& name) const override {
    const auto& m = objects_[static_cast<int>(kind)];
    auto it = m.find({ns, name});
    return it == m.end() ? nullptr : it->second;
  }
  std::vector<kube::ObjectPtr> List(Kind kind, const std::string& ns) const override {
    std::vector<kube::ObjectPtr> out;
    for (const auto& [key, obj] : objects_[static_cast<int>(kind)]) {
      if (ns.empty() || key.first == ns) out.push_back(obj);
    }
    return out;
  }
  bool Synced() const override { return true; }

  // Stores `obj` (null: forgets the object).
  void Put(Kind kind, const std::string& ns, const std::string& name, kube::ObjectPtr obj) {
    auto& m = objects_[static_cast<int>(kind)];
    if (obj) {
      m[{ns, name}] = std::move(obj);
    } else {
      m.erase({ns, name});
    }
  }
  void Clear(Kind kind) { objects_[static_cast<int>(kind)].clear(); }

 private:
  std::map<std::pair<std::string, std::string>, kube::ObjectPtr> objects_[3];
};

}  // namespace fk::testing
