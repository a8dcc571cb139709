// Hostile input stays local in the decoders (docs/design.md#bad-objects-stay-local,
// issue 9): objects nested up to 10,000 levels decode; beyond that, or of the
// wrong shape, one item of a list page or one watch line is skipped with the
// identity a salvage pass can read, and the rest decodes; error text is cut
// on a character boundary.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <pthread.h>
#include <boost/json.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <sstream>

#include "common/log.h"
#include "fake_transport.h"
#include "hostile_objects.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "kube/json.h"
#include "kube/json_fields.h"
#include "kube/objects.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/metrics.h"
#include "reconciler/sandbox_controller.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "sim/server.h"
#include "test_support.h"

namespace fk {
namespace {
using fk::testing::Accents;
using fk::testing::DeepItem;
using fk::testing::Event;
using fk::testing::Item;
using fk::testing::ListBody;
using fk::testing::Nest;
using fk::testing::ValidUtf8;
using kube::kMaxObjectDepth;

// ---- the decoders ---------------------------------------------------------------

TEST(DecodeListPage, ObjectsUpToTenThousandLevelsDecode) {
  auto page = kube::DecodeListPage(ListBody({Item("a"), DeepItem("deep", kMaxObjectDepth)},
                                            R"({"resourceVersion":"42","continue":"next-page"})"));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_EQ(page->resource_version, "42");
  EXPECT_EQ(page->continue_token, "next-page");
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_TRUE(page->bad_items.empty());
  EXPECT_EQ(page->items[1].name, "deep");
  EXPECT_TRUE(kube::DeeperThan(*page->items[1].object, kMaxObjectDepth - 1));
  EXPECT_FALSE(kube::DeeperThan(*page->items[1].object, kMaxObjectDepth));
}

TEST(DecodeListPage, ATooDeepItemIsSkippedWithItsIdentityAndTheOthersKept) {
  auto page = kube::DecodeListPage(ListBody({Item("a"), DeepItem("deep", kMaxObjectDepth + 1, "9"),
                                             DeepItem("deeper", 200000), Item("b")}));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 2u);
  EXPECT_EQ(page->items[0].name, "a");
  EXPECT_EQ(page->items[1].name, "b");
  ASSERT_EQ(page->bad_items.size(), 2u);
  const kube::BadObject& bad = page->bad_items[0];
  EXPECT_EQ(bad.ns, "ns");
  EXPECT_EQ(bad.name, "deep");
  EXPECT_EQ(bad.uid, "u-deep");
  EXPECT_EQ(bad.resource_version, "9");
  EXPECT_NE(bad.reason.find("too deep"), std::string::npos) << bad.reason;
  EXPECT_EQ(page->bad_items[1].name, "deeper");  // salvage has no depth limit
  EXPECT_EQ(bad.Describe(), "ns/deep uid u-deep resourceVersion 9: " + bad.reason);
}

TEST(DecodeListPage, ItemsOfTheWrongShapeAreSkippedOneByOne) {
  auto page = kube::DecodeListPage(ListBody({
      "42",
      R"("a string")",
      "null",
      R"({"metadata":{"name":12,"namespace":"ns","uid":"u-12"}})",
      R"({"metadata":["name","x"]})",
      R"({"metadata":{"name":""}})",
      "{}",
      Item("good"),
  }));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->items.size(), 1u);
  EXPECT_EQ(page->items[0].name, "good");
  ASSERT_EQ(page->bad_items.size(), 7u);
  EXPECT_EQ(page->bad_items[0].reason, "not a JSON object");
  EXPECT_EQ(page->bad_items[3].uid, "u-12");  // what can be read is kept for the log
  EXPECT_EQ(page->bad_items[3].reason, "no metadata.name string");
}

TEST(DecodeListPage, OddButValidContentDecodes) {
  const std::string big(1 << 20, 'x');
  auto page = kube::DecodeListPage(ListBody({
      Item("utf8", ",\"spec\":{\"note\":\"\xff\xfe\xc3(\"}"),
      Item("dup", R"(,"spec":{"operatingMode":"Running","operatingMode":"Suspended"})"),
      Item("numbers",
           R"(,"spec":{"big":123456789012345678901234567890,"neg":-99999999999999999999})"),
      Item("control", R"(,"spec":{"note":"a\nb\u0000c\u001b[31m"})"),
      Item("big", R"(,"spec":{"blob":")" + big + "\"}"),
      Item(std::string(253, 'n')),
  }));
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  EXPECT_TRUE(page->bad_items.empty());
  ASSERT_EQ(page->items.size(), 6u);
  // Duplicate keys: the last one wins, as in the API server's decoder.
  auto dup = kube::ObjectField(*page->items[1].object, "spec");
  EXPECT_EQ(kube::StringField(dup, "operatingMode"), "Suspended");
  EXPECT_EQ(page->items[5].name.size(), 253u);
}

TEST(DecodeListPage, ABodyThatIsNotAListIsAnErrorForTheWholePage) {
  for (const std::string& body :
       {std::string(R"({"items":[{"metadata":{"name":"a"}})"),  // truncated
        std::string(R"({"metadata":{}})"), std::string(R"({"items":{}})"), std::string("[]"),
        std::string(""), std::string(R"({"items":[]} trailing)")}) {
    EXPECT_FALSE(kube::DecodeListPage(body).ok()) << body;
  }
  auto empty = kube::DecodeListPage(R"({"metadata":{"resourceVersion":"5"},"items":[]})");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->items.empty());
  EXPECT_EQ(empty->resource_version, "5");
}

TEST(ScanListItems, StringsEscapesAndNestedBracketsStayInsideTheirItem) {
  const std::string body =
      R"({"a":"items","items" : [ {"x":"]\"[,}{"} , [1,[2]],"s\\",3 ], "b":[{"items":[]}]})";
  auto layout = kube::ScanListItems(body);
  ASSERT_TRUE(layout.has_value());
  ASSERT_EQ(layout->items.size(), 4u);
  EXPECT_EQ(layout->items[0], R"({"x":"]\"[,}{"})");
  EXPECT_EQ(layout->items[1], "[1,[2]]");
  EXPECT_EQ(layout->items[2], R"("s\\")");
  EXPECT_EQ(layout->items[3], "3");
  EXPECT_FALSE(kube::ScanListItems(R"({"items":[1,2)").has_value());
  EXPECT_FALSE(kube::ScanListItems(R"({"items":["1]})").has_value());
}

TEST(DecodeWatchLine, ObjectsUpToTheLimitDecodeAndBeyondItTheIdentityIsSalvaged) {
  auto ok = kube::DecodeWatchLine(Event("ADDED", DeepItem("deep", kMaxObjectDepth)));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  ASSERT_TRUE(ok->object.has_value());
  EXPECT_EQ(ok->object->name, "deep");

  auto bad = kube::DecodeWatchLine(Event("DELETED", DeepItem("deep", kMaxObjectDepth + 1, "11")));
  ASSERT_TRUE(bad.ok()) << bad.status().ToString();
  EXPECT_EQ(bad->type, "DELETED");
  EXPECT_FALSE(bad->object.has_value());
  ASSERT_TRUE(bad->bad.has_value());
  EXPECT_EQ(bad->bad->name, "deep");
  EXPECT_EQ(bad->bad->ns, "ns");
  EXPECT_EQ(bad->bad->uid, "u-deep");
  EXPECT_EQ(bad->bad->resource_version, "11");

  // A name that is not a string: the type and what else is readable.
  auto odd = kube::DecodeWatchLine(
      R"({"type":"MODIFIED","object":{"metadata":{"name":5,"uid":"u-5","resourceVersion":"12"}}})");
  ASSERT_TRUE(odd.ok());
  EXPECT_EQ(odd->type, "MODIFIED");
  ASSERT_TRUE(odd->bad.has_value());
  EXPECT_EQ(odd->bad->uid, "u-5");
  EXPECT_EQ(odd->bad->resource_version, "12");

  EXPECT_FALSE(kube::DecodeWatchLine("not json").ok());
  EXPECT_FALSE(kube::DecodeWatchLine(R"({"object":{}})").ok());
}

// Runs `fn` on a thread with a 256 KiB stack: a few hundred bytes per JSON
// level of recursion anywhere (parse, copy, destroy) would overflow it at
// 10,000 levels, so passing here shows none of it recurses per level.
void OnSmallStack(const std::function<void()>& fn) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 256 * 1024);
  pthread_t thread;
  auto run = [](void* f) -> void* {
    (*static_cast<const std::function<void()>*>(f))();
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&thread, &attr, run, const_cast<std::function<void()>*>(&fn)), 0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

// Text from the cluster cut to a bound is cut between characters, never
// inside one: what is kept is still valid UTF-8 (issue 17).
TEST(TextCuts, AnErrorMessageFromAPlainTextBodyIsCutOnACharacterBoundary) {
  for (const std::string pad : {"", "x"}) {
    const kube::ApiError e = kube::DecodeStatus(429, Accents(pad));
    EXPECT_LE(e.message.size(), 200u);
    EXPECT_GE(e.message.size(), 199u);
    EXPECT_TRUE(ValidUtf8(e.message)) << pad.size();
  }
}

TEST(TextCuts, ASalvagedIdentityIsCutOnACharacterBoundary) {
  for (const std::string pad : {"", "x"}) {
    kube::BadObject bad;
    const std::string name = Accents(pad) + Accents(pad);  // 1200 bytes, over the 512 kept
    kube::SalvageIdentity(
        R"({"metadata":{"name":")" + name + R"(","uid":"u"},"spec":)" + Nest(200000),
        /*under_object=*/false, &bad);
    EXPECT_GE(bad.name.size(), 511u);
    EXPECT_LE(bad.name.size(), 512u);
    EXPECT_TRUE(ValidUtf8(bad.name)) << pad.size();
    EXPECT_EQ(bad.uid, "u");
  }
}

TEST(ParseJson, TenThousandLevelsNeedNoStackPerLevel) {
  const std::string deep = DeepItem("deep", kMaxObjectDepth);
  const std::string list = ListBody({deep, DeepItem("deeper", 100000)});
  size_t items = 0, bad = 0;
  bool equal = false, deeper = false;
  OnSmallStack([&] {
    auto a = kube::ParseJson(deep);
    auto b = kube::ParseJson(deep);
    if (!a.ok() || !b.ok()) return;
    equal = kube::JsonEqual(**a, **b);
    deeper = kube::DeeperThan(**a, kMaxObjectDepth - 1);
    auto page = kube::DecodeListPage(list);
    if (page.ok()) items = page->items.size(), bad = page->bad_items.size();
  });  // and everything is destroyed there too
  EXPECT_TRUE(equal);
  EXPECT_TRUE(deeper);
  EXPECT_EQ(items, 1u);
  EXPECT_EQ(bad, 1u);
}

}  // namespace
}  // namespace fk
