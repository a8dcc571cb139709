#include "kube/object_store.h"

namespace fk::kube {

CachedPtr ObjectStore::Get(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mu_);
  auto it = objects_.find({ns, name});
  return it == objects_.end() ? nullptr : it->second;
}

namespace {

// What `pick` makes of each object in `ns` ("" = all), in key order.
template <class Pick>
auto Select(const ObjectMap& objects, const std::string& ns, Pick pick) {
  std::vector<decltype(pick(objects.begin()->first, objects.begin()->second))> out;
  for (const auto& [key, obj] : objects) {
    if (ns.empty() || key.ns == ns) out.push_back(pick(key, obj));
  }
  return out;
}

}  // namespace

std::vector<CachedPtr> ObjectStore::List(const std::string& ns) const {
  std::lock_guard lock(mu_);
  return Select(objects_, ns, [](const StoreKey&, const CachedPtr& obj) { return obj; });
}

void ObjectStore::ForEachKey(const std::string& ns,
                             const std::function<void(const StoreKey&)>& fn) const {
  std::lock_guard lock(mu_);
  // Keys are ordered by namespace first: `ns`'s are one run.
  auto it = ns.empty() ? objects_.begin() : objects_.lower_bound(StoreKey(ns, ""));
  for (; it != objects_.end() && (ns.empty() || it->first.ns == ns); ++it) fn(it->first);
}

size_t ObjectStore::size() const {
  std::lock_guard lock(mu_);
  return objects_.size();
}

void StoreWriter::Replace(ObjectMap listing) {
  ObjectMap old;
  {
    std::lock_guard lock(store_.mu_);
    old.swap(store_.objects_);
    store_.objects_ = std::move(listing);
  }
  // Only this writer changes the store, so it is walked without the lock
  // (readers may read it meanwhile, as they do under it).
  for (const auto& [key, now] : store_.objects_) {
    auto it = old.find(key);
    if (it == old.end()) {
      notify_({ChangeType::kAdded, key.ns.str(), key.name.str(), now->resource_version.str(), now,
               nullptr});
    } else if (it->second->resource_version != now->resource_version) {
      notify_({ChangeType::kModified, key.ns.str(), key.name.str(), now->resource_version.str(),
               now, it->second});
    }
  }
  for (const auto& [key, gone] : old) {
    if (!store_.objects_.contains(key))
      notify_({ChangeType::kDeleted, key.ns.str(), key.name.str(), gone->resource_version.str(),
               gone, gone});
  }
}

void StoreWriter::Apply(ChangeType type, const std::string& ns, const std::string& name,
                        const std::string& resource_version, CachedPtr object) {
  Change c{type, ns, name, resource_version, object, nullptr};
  {
    std::lock_guard lock(store_.mu_);
    auto it = store_.objects_.find({ns, name});
    if (it != store_.objects_.end()) c.previous = it->second;
    if (type == ChangeType::kDeleted) {
      if (it != store_.objects_.end()) store_.objects_.erase(it);
    } else {
      if (type == ChangeType::kAdded && c.previous) c.type = ChangeType::kModified;
      store_.objects_[{ns, name}] = std::move(object);
    }
  }
  notify_(c);
}

}  // namespace fk::kube
