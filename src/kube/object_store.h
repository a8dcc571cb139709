// The reflector's half of an informer (kube-runtime's reflector/store.rs):
// the store of what is cached per object, read by any thread, and the one
// writer that applies what the watcher saw to it and says what changed.
// The watcher (informer.h) decides what to list and watch; this decides
// nothing, it only keeps the store equal to what it is given.
#pragma once

#include <functional>
#include <initializer_list>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/namespaced_name.h"
#include "common/sorted_names.h"
#include "kube/json.h"

namespace fk::kube {

enum class ChangeType { kAdded, kModified, kDeleted };

struct Change {
  ChangeType type;
  std::string ns;
  std::string name;
  std::string resource_version;
  CachedPtr object;    // the new state (the last state for kDeleted)
  CachedPtr previous;  // null for kAdded
};

// Cached objects by namespace, then name. A namespace is held once, not in
// every object's node: at 10,000 sandboxes and their pods, a map keyed by
// (namespace, name) spent 32 more bytes on each of 30,000 nodes. Both levels
// are sorted arrays (common/sorted_names.h): 32 bytes an object, where a
// std::map node is 80 with its allocator header. Iterated in
// (namespace, name) order, as such a map is.
class ObjectMap {
 public:
  ObjectMap() = default;
  ObjectMap(std::initializer_list<std::pair<NamespacedName, CachedPtr>> objects);

  // The object under (ns, name); null if none. By packed key too: a relist
  // compares every object of the old listing with the new one, and spelling
  // each key out as text first cost two strings an object.
  CachedPtr Find(std::string_view ns, std::string_view name) const;
  CachedPtr Find(const CompactString& ns, const CompactString& name) const;
  bool Contains(std::string_view ns, std::string_view name) const;
  bool Contains(const CompactString& ns, const CompactString& name) const;
  // Holds `object` under (ns, name); returns what it replaced (null if none).
  CachedPtr Put(std::string_view ns, std::string_view name, CachedPtr object);
  // Drops (ns, name); returns what it held (null if none).
  CachedPtr Erase(std::string_view ns, std::string_view name);
  size_t size() const { return size_; }
  // Gives back what the arrays hold beyond their entries (a listing, once built).
  void ShrinkToFit();
  // Calls fn(ns, name, object) for each object in `ns` ("" = all), in order.
  template <class Fn>
  void ForEach(std::string_view ns, Fn&& fn) const {
    auto each = [&](const CompactString& n, const Names& names) {
      for (const auto& [name, object] : names) fn(n, name, object);
    };
    if (!ns.empty()) {
      if (auto it = by_ns_.find(ns); it != by_ns_.end()) each(it->first, it->second);
      return;
    }
    for (const auto& [n, names] : by_ns_) each(n, names);
  }

 private:
  using Names = SortedNames<CachedPtr>;
  SortedNames<Names> by_ns_;
  size_t size_ = 0;
};

// What the informer keeps per object: the transform's compact result (by
// default the whole object, a CachedJson).
class ObjectStore {
 public:
  CachedPtr Get(const std::string& ns, const std::string& name) const;
  std::vector<CachedPtr> List(const std::string& ns = "") const;
  // Calls fn with the key of every cached object in `ns` ("" = all), in key
  // order, under the store's lock: fn must not call the store. A resync or a
  // count of 10,000 objects copies no list of keys on the way (memory).
  void ForEachKey(const std::string& ns,
                  const std::function<void(const NamespacedName&)>& fn) const;
  size_t size() const;

 private:
  friend class StoreWriter;
  mutable std::mutex mu_;
  ObjectMap objects_;
};

// The store's one writer. Every change it makes is passed to `notify`, once,
// after the store holds it and outside the store's lock (a subscriber may
// read the store, never write it: Replace walks the store while notifying).
// Listings and events hold no null objects.
class StoreWriter {
 public:
  StoreWriter(ObjectStore& store, std::function<void(const Change&)> notify)
      : store_(store), notify_(std::move(notify)) {}

  // A whole listing becomes the store, as it is (no copy: at 10,000
  // sandboxes a copy was MBs of a start-up peak the allocator keeps). Then
  // each difference is notified, one by one: what was added or modified in
  // key order, then what is gone.
  void Replace(ObjectMap listing);
  // One watch event at `resource_version`: an ADDED of an object already
  // held is a modification.
  void Apply(ChangeType type, const std::string& ns, const std::string& name,
             const std::string& resource_version, CachedPtr object);

 private:
  ObjectStore& store_;
  std::function<void(const Change&)> notify_;
};

}  // namespace fk::kube
