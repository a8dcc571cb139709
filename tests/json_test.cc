// Decoding the API's JSON (kube/json.h): a list page decoded with a
// transform (trimmed caches, issue 10).
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <memory>
#include <string>
#include <vector>

#include "kube/json.h"
#include "kube/objects.h"

namespace fk::kube {
namespace {
namespace json = boost::json;

// A page decoded with a transform holds one tree at a time: each item's tree
// is gone before the next item is parsed, so a list's peak is its body plus
// compact items, never a page (let alone a cluster) of trees.
TEST(DecodeListPage, EachTransformedItemsTreeIsFreedBeforeTheNextIsParsed) {
  std::string body = R"({"metadata":{"resourceVersion":"9"},"items":[)";
  for (int i = 0; i < 50; ++i) {
    body += std::string(i ? "," : "") + R"({"metadata":{"name":"p)" + std::to_string(i) +
            R"(","uid":"u)" + std::to_string(i) + R"(","resourceVersion":"3"},"spec":{}})";
  }
  body += "]}";
  std::vector<std::weak_ptr<const json::value>> trees;
  int alive_at_transform = 0;
  const Transform transform = [&](const DecodedObject& d) -> Result<CachedRef<Cached>> {
    for (const auto& t : trees) alive_at_transform += !t.expired();
    trees.push_back(d.object);
    return CachedRef<Cached>(MakeCached<CachedPod>());
  };
  auto page = DecodeListPage(body, transform);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 50u);
  EXPECT_EQ(alive_at_transform, 0);
  for (const auto& t : trees) EXPECT_TRUE(t.expired());
  EXPECT_EQ(page->items[7].object, nullptr);
  EXPECT_EQ(page->items[7].cached->uid, "u7");
  EXPECT_EQ(page->items[7].cached->resource_version, "3");
}

}  // namespace
}  // namespace fk::kube
