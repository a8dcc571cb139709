#include "kube/object_store.h"

namespace fk::kube {

ObjectMap::ObjectMap(std::initializer_list<std::pair<NamespacedName, CachedPtr>> objects) {
  for (const auto& [key, object] : objects) Put(key.ns.str(), key.name.str(), object);
}

namespace {

// The entry of (ns, name) in `by_ns`, by text or by packed key; null if none.
template <class ByNs, class Key>
const CachedPtr* EntryIn(const ByNs& by_ns, const Key& ns, const Key& name) {
  auto names = by_ns.find(ns);
  if (names == by_ns.end()) return nullptr;
  auto it = names->second.find(name);
  return it == names->second.end() ? nullptr : &it->second;
}

}  // namespace

CachedPtr ObjectMap::Find(std::string_view ns, std::string_view name) const {
  const CachedPtr* entry = EntryIn(by_ns_, ns, name);
  return entry ? *entry : nullptr;
}

CachedPtr ObjectMap::Find(const CompactString& ns, const CompactString& name) const {
  const CachedPtr* entry = EntryIn(by_ns_, ns, name);
  return entry ? *entry : nullptr;
}

bool ObjectMap::Contains(std::string_view ns, std::string_view name) const {
  return EntryIn(by_ns_, ns, name) != nullptr;
}

bool ObjectMap::Contains(const CompactString& ns, const CompactString& name) const {
  return EntryIn(by_ns_, ns, name) != nullptr;
}

CachedPtr ObjectMap::Put(std::string_view ns, std::string_view name, CachedPtr object) {
  auto names = by_ns_.try_emplace(ns).first;
  auto [it, added] = names->second.try_emplace(name, std::move(object));
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

void ObjectMap::ShrinkToFit() {
  by_ns_.shrink_to_fit();
  for (auto& [ns, names] : by_ns_) names.shrink_to_fit();
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
                             const std::function<void(const NamespacedName&)>& fn) const {
  std::lock_guard lock(mu_);
  objects_.ForEach(ns, [&](const CompactString& n, const CompactString& name, const CachedPtr&) {
    fn(NamespacedName(n, name));
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
    store_.objects_.ShrinkToFit();
  }
  // Only this writer changes the store, so it is walked without the lock
  // (readers may read it meanwhile, as they do under it).
  store_.objects_.ForEach("", [&](const CompactString& ns, const CompactString& name,
                                  const CachedPtr& now) {
    CachedPtr was = old.Find(ns, name);
    if (!was) {
      notify_(
          {ChangeType::kAdded, ns.str(), name.str(), now->resource_version.str(), now, nullptr});
    } else if (was->resource_version != now->resource_version) {
      notify_({ChangeType::kModified, ns.str(), name.str(), now->resource_version.str(), now, was});
    }
  });
  old.ForEach("", [&](const CompactString& ns, const CompactString& name, const CachedPtr& gone) {
    if (!store_.objects_.Contains(ns, name))
      notify_(
          {ChangeType::kDeleted, ns.str(), name.str(), gone->resource_version.str(), gone, gone});
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
