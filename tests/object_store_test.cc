// kube/object_store.h: the store and its one writer, without a watcher. A
// listing becomes the store as it is and each difference is notified once,
// in order; an event is applied and notified with the state it replaced.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "kube/object_store.h"

namespace fk::kube {
namespace {

CachedPtr Object(const std::string& uid, const std::string& rv) {
  auto c = MakeCached<CachedJson>(nullptr);
  c->uid = CompactString(uid);
  c->resource_version = ResourceVersion(rv);
  return c;
}

using Key = std::pair<std::string, std::string>;  // namespace, name

class ObjectStoreTest : public ::testing::Test {
 protected:
  // Each change as "A|M|D name rv (previous rv)", read back from the store
  // as it is notified: the store already holds the change, and is not locked.
  ObjectStore store_;
  StoreWriter writer_{
      store_, [this](const Change& c) {
        const CachedPtr now = store_.Get(c.ns, c.name);
        seen_.push_back(std::string(c.type == ChangeType::kAdded      ? "A "
                                    : c.type == ChangeType::kModified ? "M "
                                                                      : "D ") +
                        c.name + " " + c.resource_version +
                        (c.previous ? " (" + c.previous->resource_version.str() + ")" : "") +
                        (now ? "" : " gone"));
      }};
  std::vector<Key> Keys(const std::string& ns) const {
    std::vector<Key> keys;
    store_.ForEachKey(ns, [&](const NamespacedName& k) { keys.push_back(k.Unpacked()); });
    return keys;
  }
  std::vector<std::string> seen_;
};

TEST_F(ObjectStoreTest, AListingBecomesTheStoreAndEachDifferenceIsNotifiedOnce) {
  writer_.Replace({{{"ns", "a"}, Object("ua", "1")}, {{"ns", "b"}, Object("ub", "1")}});
  EXPECT_EQ(seen_, (std::vector<std::string>{"A a 1", "A b 1"}));
  seen_.clear();
  // b changed, c is new, a is gone; an unchanged resourceVersion is no news.
  writer_.Replace({{{"ns", "b"}, Object("ub", "2")},
                   {{"ns", "c"}, Object("uc", "1")},
                   {{"other", "d"}, Object("ud", "1")}});
  EXPECT_EQ(seen_, (std::vector<std::string>{"M b 2 (1)", "A c 1", "A d 1", "D a 1 (1) gone"}));
  EXPECT_EQ(store_.size(), 3u);
  EXPECT_EQ(Keys("ns"), (std::vector<Key>{{"ns", "b"}, {"ns", "c"}}));
  EXPECT_EQ(Keys("other"), (std::vector<Key>{{"other", "d"}}));
  EXPECT_EQ(Keys("n"), std::vector<Key>{});  // a prefix of a namespace is not it
  EXPECT_EQ(Keys("").size(), 3u);
  EXPECT_EQ(store_.List("other").size(), 1u);
  seen_.clear();
  writer_.Replace({{{"ns", "b"}, Object("ub", "2")},
                   {{"ns", "c"}, Object("uc", "1")},
                   {{"other", "d"}, Object("ud", "1")}});
  EXPECT_TRUE(seen_.empty());
}

TEST_F(ObjectStoreTest, EventsAreAppliedWithTheStateTheyReplace) {
  writer_.Apply(ChangeType::kAdded, "ns", "a", "1", Object("ua", "1"));
  writer_.Apply(ChangeType::kAdded, "ns", "a", "2", Object("ua", "2"));  // held: a modification
  writer_.Apply(ChangeType::kModified, "ns", "a", "3", Object("ua", "3"));
  writer_.Apply(ChangeType::kDeleted, "ns", "a", "4", Object("ua", "3"));
  writer_.Apply(ChangeType::kDeleted, "ns", "never", "5", Object("un", "5"));
  EXPECT_EQ(seen_, (std::vector<std::string>{"A a 1", "M a 2 (1)", "M a 3 (2)", "D a 4 (3) gone",
                                             "D never 5 gone"}));
  EXPECT_EQ(store_.size(), 0u);
  EXPECT_EQ(store_.Get("ns", "a"), nullptr);
}

// The map the store keeps: by namespace, then name.
TEST(ObjectMapTest, PutAndEraseSayWhatTheyReplacedAndKeepTheCount) {
  ObjectMap m;
  EXPECT_EQ(m.Put("ns", "a", Object("u1", "1")), nullptr);
  EXPECT_EQ(m.Put("other", "a", Object("u2", "1")), nullptr);  // another namespace, same name
  CachedPtr was = m.Put("ns", "a", Object("u3", "2"));
  ASSERT_NE(was, nullptr);
  EXPECT_EQ(was->uid, "u1");
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m.Find("ns", "a")->uid, "u3");
  EXPECT_EQ(m.Find("other", "a")->uid, "u2");
  EXPECT_EQ(m.Find("ns", "b"), nullptr);
  EXPECT_EQ(m.Find("nope", "a"), nullptr);
  EXPECT_EQ(m.Erase("ns", "b"), nullptr);
  EXPECT_EQ(m.Erase("ns", "a")->uid, "u3");
  EXPECT_FALSE(m.Contains("ns", "a"));
  EXPECT_TRUE(m.Contains("other", "a"));
  EXPECT_EQ(m.size(), 1u);
  std::vector<std::string> seen;
  m.ForEach("", [&](const CompactString& ns, const CompactString& name, const CachedPtr&) {
    seen.push_back(ns.str() + "/" + name.str());
  });
  EXPECT_EQ(seen, std::vector<std::string>{"other/a"});
}

// A packed key finds what its text finds (a relist looks the old listing up
// by the new one's keys).
TEST(ObjectMapTest, APackedKeyFindsWhatItsTextFinds) {
  ObjectMap m;
  const std::string uid = "0a1b2c3d-0000-4000-8000-00000000000a";  // packed as a uuid
  m.Put("openshell-agents", uid, Object("u1", "1"));
  const CompactString ns("openshell-agents"), name(uid);
  ASSERT_NE(m.Find(ns, name), nullptr);
  EXPECT_EQ(m.Find(ns, name)->uid, "u1");
  EXPECT_TRUE(m.Contains(ns, name));
  EXPECT_EQ(m.Find(ns, CompactString("other")), nullptr);
  EXPECT_FALSE(m.Contains(CompactString("other"), name));
}

// The map is two levels of sorted arrays (issue 36): under any order of puts
// and erases over many namespaces it holds, finds and orders what a
// std::map keyed by (namespace, name) does, an emptied namespace is gone,
// and a store that took a listing whole still serves it.
TEST(ObjectMapTest, HoldsAndOrdersWhatAMapByNamespaceAndNameWould) {
  ObjectMap m;
  std::map<std::pair<std::string, std::string>, std::string> model;  // -> uid
  std::mt19937 random(36);
  for (int step = 0; step < 4000; ++step) {
    const std::string ns = "ns-" + std::to_string(random() % 13);
    const std::string name = "ns-0042-sb-" + std::to_string(random() % 50) +
                             (random() % 4 == 0 ? std::string(30, 'x') : "");
    if (random() % 3 == 0) {
      const CachedPtr gone = m.Erase(ns, name);
      const auto it = model.find({ns, name});
      ASSERT_EQ(gone != nullptr, it != model.end());
      if (gone) {
        EXPECT_EQ(gone->uid, it->second);
        model.erase(it);
      }
    } else {
      const std::string uid = "u" + std::to_string(step);
      const CachedPtr was = m.Put(ns, name, Object(uid, "1"));
      EXPECT_EQ(was != nullptr, model.contains({ns, name}));
      model[{ns, name}] = uid;
    }
    ASSERT_EQ(m.size(), model.size());
  }
  std::vector<std::string> seen, expected;
  m.ForEach("", [&](const CompactString& ns, const CompactString& name, const CachedPtr& o) {
    seen.push_back(ns.str() + "/" + name.str() + "=" + o->uid.str());
  });
  for (const auto& [key, uid] : model) expected.push_back(key.first + "/" + key.second + "=" + uid);
  EXPECT_EQ(seen, expected);
  for (const auto& [key, uid] : model) EXPECT_EQ(m.Find(key.first, key.second)->uid, uid);
  // Emptied namespaces are gone: a namespace's walk sees only its own.
  for (int i = 0; i < 13; ++i) {
    const std::string ns = "ns-" + std::to_string(i);
    size_t in_model = 0, walked = 0;
    for (const auto& [key, uid] : model) in_model += key.first == ns;
    m.ForEach(ns, [&](const CompactString& n, const CompactString&, const CachedPtr&) {
      EXPECT_EQ(n, ns);
      ++walked;
    });
    EXPECT_EQ(walked, in_model);
  }
  ObjectStore store;
  StoreWriter writer(store, [](const Change&) {});
  writer.Replace(std::move(m));
  EXPECT_EQ(store.size(), model.size());
  for (const auto& [key, uid] : model) EXPECT_EQ(store.Get(key.first, key.second)->uid, uid);
}

}  // namespace
}  // namespace fk::kube
