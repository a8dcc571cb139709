#include "kube/object_store.h"

namespace fk::kube {

ObjectMap::ObjectMap(std::initializer_list<std::pair<StoreKey, CachedPtr>> objects) {
  for (const auto& [key, object] : objects) Put(key.ns.str(), key.name.str(), object);
}

CachedPtr ObjectMap::Find(std::string_view ns, std::string_view name) const {
  auto names = by_ns_.find(ns);
  if (names == by_ns_.end()) return nullptr;
  auto it = names->second.find(name);
  return it == names->second.end() ? nullptr : it->second;
}

bool ObjectMap::Contains(std::string_view ns, std::string_view name) const {
  auto names = by_ns_.find(ns);
  return names != by_ns_.end() && names->second.contains(name);
}

CachedPtr ObjectMap::Put(std::string_view ns, std::string_view name, CachedPtr object) {
  auto names = by_ns_.find(ns);
  if (names == by_ns_.end()) names = by_ns_.emplace(CompactString(ns), Names{}).first;
  auto [it, added] = names->second.try_emplace(CompactString(name), std::move(object));
  if (added) {
    ++size_;
    return nullptr;
  }
  std::swap(it->second, object);
  return object;
}

CachedPtr ObjectMap::Erase(std::string_view ns, std::string_view name) {
  auto names = by_ns_.find(ns);
  if (names == by_ns_.end()) return nullptr;
  auto it = names->second.find(name);
  if (it == names->second.end()) return nullptr;
  CachedPtr held = std::move(it->second);
  names->second.erase(it);
  --size_;
  // An emptied namespace goes too: namespaces come and go.
  if (names->second.empty()) by_ns_.erase(names);
  return held;
}

CachedPtr ObjectStore::Get(const std::string& ns, const std::string& name) const {
  std::lock_guard lock(mu_);
  return objects_.Find(ns, name);
}

std::vector<CachedPtr> ObjectStore::List(const std::string& ns) const {
  std::lock_guard lock(mu_);
  std::vector<CachedPtr> out;
  objects_.ForEach(ns, [&](const CompactString&, const CompactString&, const CachedPtr& object) {
    out.push_back(object);
  });
  return out;
}

void ObjectStore::ForEachKey(const std::string& ns,
                             const std::function<void(const StoreKey&)>& fn) const {
  std::lock_guard lock(mu_);
  objects_.ForEach(ns, [&](const CompactString& n, const CompactString& name, const CachedPtr&) {
    fn(StoreKey(n, name));
  });
}

size_t ObjectStore::size() const {
  std::lock_guard lock(mu_);
  return objects_.size();
}

void StoreWriter::Replace(ObjectMap listing) {
  ObjectMap old;
  {
    std::lock_guard lock(store_.mu_);
    std::swap(old, store_.objects_);
    store_.objects_ = std::move(listing);
  }
  // Only this writer changes the store, so it is walked without the lock
  // (readers may read it meanwhile, as they do under it).
  store_.objects_.ForEach(
      "", [&](const CompactString& ns, const CompactString& name, const CachedPtr& now) {
        const std::string n = ns.str(), nm = name.str();
        CachedPtr was = old.Find(n, nm);
        if (!was) {
          notify_({ChangeType::kAdded, n, nm, now->resource_version.str(), now, nullptr});
        } else if (was->resource_version != now->resource_version) {
          notify_({ChangeType::kModified, n, nm, now->resource_version.str(), now, was});
        }
      });
  old.ForEach("", [&](const CompactString& ns, const CompactString& name, const CachedPtr& gone) {
    const std::string n = ns.str(), nm = name.str();
    if (!store_.objects_.Contains(n, nm))
      notify_({ChangeType::kDeleted, n, nm, gone->resource_version.str(), gone, gone});
  });
}

void StoreWriter::Apply(ChangeType type, const std::string& ns, const std::string& name,
                        const std::string& resource_version, CachedPtr object) {
  Change c{type, ns, name, resource_version, object, nullptr};
  {
    std::lock_guard lock(store_.mu_);
    if (type == ChangeType::kDeleted) {
      c.previous = store_.objects_.Erase(ns, name);
    } else {
      c.previous = store_.objects_.Put(ns, name, std::move(object));
      if (type == ChangeType::kAdded && c.previous) c.type = ChangeType::kModified;
    }
  }
  notify_(c);
}

}  // namespace fk::kube
