// The one way JSON from the API server (or any peer) becomes a tree, and the
// decoders of list pages and watch lines that keep one bad object local
// (docs/design.md#bad-objects-stay-local).
//
// - Depth: up to kMaxObjectDepth nested arrays/objects per object (the API
//   server's own decoder allows 10,000), plus the envelope's levels.
// - No recursion on the C++ stack per JSON level: the text is read by our own
//   iterative reader (json_reader.h; Boost.JSON's parser is a recursive
//   descent), and destroying or copying a Boost.JSON value recurses too.
//   A parsed tree therefore lives in its own monotonic arena (a non-shared
//   storage_ptr whose deallocate is trivial), which makes its destruction skip
//   the walk: the arena is released in one go. Never copy such a tree into
//   default storage; share it through the pointer instead.
// - Invalid UTF-8 in a string is accepted: the API server never sends it, and
//   one bad string must not poison a list.
#pragma once

#include <atomic>
#include <boost/intrusive_ptr.hpp>
#include <boost/json/fwd.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/compact_string.h"
#include "common/status.h"
#include "kube/resource_version.h"

namespace fk::kube {

inline constexpr int kMaxObjectDepth = 10000;

// A parsed document. The pointee is owned together with its arena, so an
// aliasing shared_ptr to any value inside keeps the whole tree alive:
// std::shared_ptr<const value>(doc, &inner).
using JsonDoc = std::shared_ptr<boost::json::value>;
using ObjectPtr = std::shared_ptr<const boost::json::value>;

// `envelope_levels` are allowed on top of kMaxObjectDepth (1 for a watch
// event's {"type","object"} wrapper). Errors name what failed ("too deep",
// "syntax error" ...), prefixed by `what`.
Result<JsonDoc> ParseJson(std::string_view text, std::string_view what = "JSON",
                          int envelope_levels = 0);

// Whatever identity could be read from an object that could not be decoded,
// and why it could not.
struct BadObject {
  std::string ns, name, uid, resource_version;
  std::string reason;
  std::string Describe() const;  // "ns/name (uid u, resourceVersion 5): reason"
};

// What a cache keeps of an object instead of its whole tree (a transform's
// result, as client-go's SetTransform): a compact struct of the fields the
// controller reads. The informer fills the identity it needs itself.
//
// No vtable: each derived type sets a one-byte kind, and As<T> checks it
// where a dynamic_cast did (a vtable pointer was 8 bytes of every cached
// object, three a sandbox). Counted in place: a CachedRef holds the object
// alone, where a shared_ptr made by make_shared added a 16-byte control
// block to its heap chunk. The count and the kind sit in the padding after
// resource_version, and a derived type's own small fields follow them there.
// The destructor is protected and not virtual, so nothing can delete through
// the base: the last reference deletes the object as its kind's type.
struct Cached {
  enum class Kind : uint8_t { kJson, kSandbox, kPolicy, kPod };

  CompactString uid;
  ResourceVersion resource_version;

  Kind kind() const { return kind_; }

  // Shared and never copied: the count belongs to the object.
  Cached(const Cached&) = delete;
  Cached& operator=(const Cached&) = delete;

 protected:
  explicit Cached(Kind kind) : kind_(kind) {}
  ~Cached() = default;

 private:
  // boost::intrusive_ptr's hooks (found by argument-dependent lookup).
  // Atomic: the informer's thread writes the store while the reconciler's
  // workers read it, each holding references.
  friend void intrusive_ptr_add_ref(const Cached* cached) {
    cached->references_.fetch_add(1, std::memory_order_relaxed);
  }
  friend void intrusive_ptr_release(const Cached* cached) {
    if (cached->references_.fetch_sub(1, std::memory_order_acq_rel) == 1) Delete(cached);
  }
  // Deletes `cached` as the type its kind names (objects.cc: beside the types).
  static void Delete(const Cached* cached);

  mutable std::atomic<uint32_t> references_{0};
  Kind kind_;
};
// A counted reference to a cached object; CachedRef<T>(new T(...)) makes one
// (MakeCached below).
template <class T>
using CachedRef = boost::intrusive_ptr<T>;
using CachedPtr = CachedRef<const Cached>;

template <class T, class... Args>
CachedRef<T> MakeCached(Args&&... args) {
  return CachedRef<T>(new T(std::forward<Args>(args)...));
}

// `cached` as the derived type T, or null when it is null or of another kind
// (a store holding objects of another type): the check a dynamic_cast made.
template <class T>
const T* As(const Cached* cached) {
  return cached && cached->kind() == T::kKind ? static_cast<const T*>(cached) : nullptr;
}
template <class T>
CachedRef<const T> As(CachedPtr cached) {
  if (!cached || cached->kind() != T::kKind) return nullptr;
  return boost::static_pointer_cast<const T>(std::move(cached));
}

// The whole object, for callers that keep it (tools, tests).
struct CachedJson final : Cached {
  static constexpr Kind kKind = Kind::kJson;
  explicit CachedJson(ObjectPtr j) : Cached(kKind), json(std::move(j)) {}
  ObjectPtr json;
};
// The tree a CachedJson holds (null for anything else).
const boost::json::value* JsonOf(const CachedPtr& cached);

// An object with a usable identity (metadata.name a non-empty string).
struct DecodedObject {
  std::string ns, name, uid, resource_version;
  ObjectPtr object;  // the tree; released once a transform made `cached`
  CachedRef<Cached> cached;
};

// Turns a decoded object into what is cached. An error makes it a bad object
// (logged, its cached state kept); a null result drops it: not ours to cache
// (e.g. a NetworkPolicy other than the fences), not an error.
using Transform = std::function<Result<CachedRef<Cached>>(const DecodedObject&)>;
// What `transform` keeps of a parsed object (null: dropped), identity filled.
Result<CachedPtr> Transformed(const Transform& transform, ObjectPtr object);
// Applies `transform` to `*object`: sets object->cached and releases the tree.
// Returns false when the object is dropped.
Result<bool> TransformObject(const Transform& transform, DecodedObject* object);

struct ListPage {
  std::string resource_version;  // metadata.resourceVersion
  std::string continue_token;    // metadata.continue; "" on the last page
  std::vector<DecodedObject> items;
  std::vector<BadObject> bad_items;  // skipped: counted and logged by the caller
};

// One page of a list. The body must be valid JSON with an `items` array (else
// the whole page is an error: it is truncated or not a list); each item is
// then decoded on its own, so an item too deep, of the wrong shape or without
// a usable identity lands in bad_items and the others are kept.
// With a transform, each item is transformed as soon as it is decoded, so its
// tree is gone before the next item is parsed: a page costs its body and its
// compact items, never a page of trees (a transform's error makes a bad item;
// a dropped item is left out).
Result<ListPage> DecodeListPage(std::string_view body, const Transform& transform = nullptr);

struct WatchEvent {
  std::string type;  // ADDED, MODIFIED, DELETED, BOOKMARK, ERROR, or whatever was sent
  // Set when the object decoded (for ERROR: the Status object, identity empty).
  std::optional<DecodedObject> object;
  // Set when it did not; holds the identity salvaged from the line.
  std::optional<BadObject> bad;
};

// One line of a watch stream. An error means not even the event type could
// be read; an event whose object cannot be decoded comes back with `bad` set.
Result<WatchEvent> DecodeWatchLine(std::string_view line);

// Reads type and metadata identity from text that cannot be built into a tree
// (too deep, invalid, truncated), with no depth limit and no tree: the salvage
// pass behind bad items. `under_object`: the identity is under "object" (a
// watch line) rather than at the top. Returns the event type read ("" if none).
std::string SalvageIdentity(std::string_view text, bool under_object, BadObject* out);

// Deep equality (as Boost.JSON's operator==) without recursion, and in
// linear time: Boost's is quadratic in the depth (2 s at 5,000 levels).
bool JsonEqual(const boost::json::value& a, const boost::json::value& b);

// Whether `v` nests more than `levels` arrays/objects (a scalar is 0 deep,
// {} is 1). Iterative, for code that must walk a tree recursively: check
// first, and treat a deeper tree as what it is, not what it should be.
bool DeeperThan(const boost::json::value& v, int levels);

// Splits the top-level "items" array of a list body into the byte ranges of
// its elements, without building anything. nullopt if the body is not
// balanced JSON with such an array. `items_begin/end` delimit the array
// itself ('[' ... ']').
struct ItemsLayout {
  size_t items_begin = 0, items_end = 0;
  std::vector<std::string_view> items;
};
std::optional<ItemsLayout> ScanListItems(std::string_view body);

}  // namespace fk::kube
