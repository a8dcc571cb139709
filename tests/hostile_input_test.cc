// Hostile input stays local (docs/design.md#bad-objects-stay-local, issue 9):
// objects nested up to 10,000 levels decode and are decided like any other;
// beyond that, or of the wrong shape, one object is skipped, counted and
// logged with its identity while everything else proceeds; list pages and
// watch lines alike; an informer whose relist keeps failing is not synced
// and says why. The last test drives the real controller against the
// simulator with all of it at once and counts PATCHes and journal rows.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <pthread.h>
#include <boost/json.hpp>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <sstream>

#include "common/log.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/fake_transport.h"
#include "kube/informer.h"
#include "kube/json.h"
#include "kube/json_fields.h"
#include "kube/objects.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/controller.h"
#include "reconciler/metrics.h"
#include "sim/handler.h"
#include "sim/scenario.h"
#include "sim/server.h"
#include "test_support.h"

namespace fk {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using fk::testing::Eventually;
using kube::kMaxObjectDepth;

// `depth` nested objects around `leaf`: Nest(2, "1") is {"a":{"a":1}}.
std::string Nest(int depth, const std::string& leaf = "1") {
  std::string s;
  s.reserve(static_cast<size_t>(depth) * 6 + leaf.size() + static_cast<size_t>(depth));
  for (int i = 0; i < depth; ++i) s += "{\"a\":";
  s += leaf;
  s.append(static_cast<size_t>(depth), '}');
  return s;
}

// An object whose metadata comes first, then `rest` (e.g. ,"spec":...).
std::string Item(const std::string& name, const std::string& rest = "",
                 const std::string& rv = "7") {
  return R"({"metadata":{"name":")" + name + R"(","namespace":"ns","uid":"u-)" + name +
         R"(","resourceVersion":")" + rv + R"("})" + rest + "}";
}

// An object `depth` levels deep in all (the root, then spec nesting).
std::string DeepItem(const std::string& name, int depth, const std::string& rv = "7") {
  return Item(name, ",\"spec\":" + Nest(depth - 1), rv);
}

std::string ListBody(const std::vector<std::string>& items,
                     const std::string& meta = R"({"resourceVersion":"42"})") {
  std::string s = R"({"kind":"SandboxList","apiVersion":"agents.x-k8s.io/v1beta1","metadata":)" +
                  meta + R"(,"items":[)";
  for (size_t i = 0; i < items.size(); ++i) s += (i ? ",\n " : "") + items[i];
  return s + "]}";
}

std::string Event(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}";
}

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

// Whether `s` is valid UTF-8 (no overlong forms or surrogates checked: a cut
// only ever leaves a truncated sequence).
bool ValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t n = c < 0x80           ? 1
                     : (c >> 5) == 0x6  ? 2
                     : (c >> 4) == 0xE  ? 3
                     : (c >> 3) == 0x1E ? 4
                                        : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// 300 two-byte characters after `pad`: any cut at an odd offset splits one.
std::string Accents(const std::string& pad) {
  std::string s = pad;
  for (int i = 0; i < 300; ++i) s += "\xc3\xa9";
  return s;
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

// ---- informers ----------------------------------------------------------------------

// A watch stream the test drives: lines are sent and the stream ended from
// the test thread; Cancel (the informer stopping) ends it once.
class DrivenStream {
 public:
  explicit DrivenStream(kube::Transport::StreamCallbacks cb) : cb_(std::move(cb)) {}
  void Send(const std::string& line) {
    std::lock_guard lock(mu_);
    if (!ended_) cb_.on_line(line);
  }
  void End(const Status& s) {
    std::lock_guard lock(mu_);
    if (ended_) return;
    ended_ = true;
    cb_.on_end(s, std::nullopt);
  }

 private:
  std::mutex mu_;
  bool ended_ = false;
  kube::Transport::StreamCallbacks cb_;
};

class StreamHandle final : public kube::Transport::Stream {
 public:
  explicit StreamHandle(std::shared_ptr<DrivenStream> s) : s_(std::move(s)) {}
  ~StreamHandle() override { Cancel(); }
  void Cancel() override { s_->End(Status::IOError("cancelled")); }

 private:
  std::shared_ptr<DrivenStream> s_;
};

// Opened streams by resource plural, newest last.
class Streams {
 public:
  kube::FakeTransport::StreamHandler Handler() {
    return [this](const kube::HttpRequest& r, kube::Transport::StreamCallbacks cb) {
      auto s = std::make_shared<DrivenStream>(std::move(cb));
      std::lock_guard lock(mu_);
      for (const char* plural : {"sandboxes", "networkpolicies", "pods"}) {
        if (r.target.find(std::string("/") + plural + "?") != std::string::npos)
          open_[plural].push_back(s);
      }
      return std::make_unique<StreamHandle>(s);
    };
  }
  std::shared_ptr<DrivenStream> Latest(const std::string& plural) {
    std::lock_guard lock(mu_);
    auto& v = open_[plural];
    return v.empty() ? nullptr : v.back();
  }
  size_t Count(const std::string& plural) {
    std::lock_guard lock(mu_);
    return open_[plural].size();
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<std::shared_ptr<DrivenStream>>> open_;
};

using fk::testing::FromSim;

sim::ApiReply AskSim(sim::Simulator& sim, const kube::HttpRequest& r) {
  return sim::HandleRequest(sim, fk::testing::ToSim(r), "fake.invalid:443");
}

bool IsList(const std::string& target, const std::string& plural) {
  return target.find("/" + plural + "?limit=") != std::string::npos;
}

const char* kFiveSandboxes = R"(
namespaces:
  - name: ns-a
    fence: {boundaryPort: 5500}
    sandboxes:
      - {name: s1, mode: Running}
      - {name: s2, mode: Running}
      - {name: s3, mode: Running}
      - {name: s4, mode: Running}
      - {name: s5, mode: Running}
)";

Status Load(sim::Simulator& sim, const std::string& yaml) {
  auto sc = sim::ParseScenario(yaml, "test scenario");
  if (!sc.ok()) return sc.status();
  return sim::ApplyScenario(sim, *sc);
}

kube::ResourceRef SandboxRef() { return {"agents.x-k8s.io", "v1beta1", "sandboxes", true}; }

// An informer (or cache) over an in-process transport, with instant backoffs.
struct Harness {
  ManualTimeSource time;
  kube::FakeTransport* transport = nullptr;
  std::unique_ptr<kube::ApiClient> client;
  Streams streams;

  explicit Harness(kube::FakeTransport::Handler handler) {
    auto t = std::make_unique<kube::FakeTransport>(std::move(handler));
    transport = t.get();
    transport->SetStreamHandler(streams.Handler());
    kube::ClientOptions co;
    co.max_retries = 0;
    co.time = &time;
    client = kube::ApiClient::CreateWithTransport(kube::ClusterConfig{}, co, std::move(t));
  }
  kube::InformerOptions Options(int page_size = 500) {
    kube::InformerOptions o;
    o.ns = "ns-a";
    o.page_size = page_size;
    o.time = &time;
    return o;
  }
  int Lists(const std::string& plural) {
    int n = 0;
    for (const auto& r : transport->requests()) n += !r.stream && IsList(r.target, plural);
    return n;
  }
};

TEST(InformerPaging, ListsInPagesAndRestartsWhenTheContinueTokenExpires) {
  sim::Simulator sim;
  ASSERT_TRUE(Load(sim, kFiveSandboxes).ok());
  bool expire_once = true;
  Harness h([&](const kube::HttpRequest& r) -> Result<kube::HttpResponse> {
    if (IsList(r.target, "sandboxes") && r.target.find("continue=") != std::string::npos &&
        expire_once) {
      // Between two pages: a write, then the history (and with it the
      // list's snapshot) is compacted away.
      expire_once = false;
      EXPECT_TRUE(sim.store()
                      .Create(*sim::FindKind("agents.x-k8s.io", "sandboxes"), "ns-a",
                              json::object{{"metadata", {{"name", "s6"}}},
                                           {"spec", {{"operatingMode", "Suspended"}}}})
                      .ok());
      sim.ExpireHistory();
    }
    return FromSim(AskSim(sim, r));
  });
  kube::Informer informer(*h.client, SandboxRef(), h.Options(2));
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(30s));
  // 2 + (410) + 2 + 2 + 2: the first page, the expired second page, then
  // all six sandboxes again from the start in three pages.
  EXPECT_EQ(h.Lists("sandboxes"), 5);
  EXPECT_EQ(informer.stats().list_restarts, 1);
  EXPECT_EQ(informer.stats().pages, 5);
  EXPECT_EQ(informer.store().size(), 6u);
  EXPECT_EQ(informer.stats().resource_version,
            std::to_string(sim.store().CurrentResourceVersion()));
  informer.Stop();
}

// The simulator's answer, Accept header included (a metadata-only list).
sim::ApiReply AskSimAccepting(sim::Simulator& sim, const kube::HttpRequest& r) {
  return sim::HandleRequest(sim, fk::testing::ToSim(r, /*with_accept=*/true), "fake.invalid:443");
}

// The `limit` of each sandbox list request, in order (-1 for a metadata-only one).
std::vector<int> ListLimits(const kube::FakeTransport& t) {
  std::vector<int> out;
  for (const auto& r : t.requests()) {
    if (r.stream || !IsList(r.target, "sandboxes")) continue;
    bool metadata = false;
    for (const auto& [k, v] : r.headers) metadata |= k == "Accept";
    const size_t at = r.target.find("limit=") + 6;
    out.push_back(metadata ? -1 : std::stoi(r.target.substr(at)));
  }
  return out;
}

Status CreateSandbox(sim::Simulator& sim, const std::string& name, const json::object& annotations,
                     const std::string& spec_padding = "") {
  json::object spec{{"operatingMode", "Running"}};
  if (!spec_padding.empty()) spec["padding"] = spec_padding;
  return sim.store()
                 .Create(*sim::FindKind("agents.x-k8s.io", "sandboxes"), "ns-a",
                         json::object{{"metadata", {{"name", name}, {"annotations", annotations}}},
                                      {"spec", spec}})
                 .ok()
             ? Status::Ok()
             : Status::Internal("cannot create " + name);
}

// Many large objects (500 sandboxes of 256 KiB each are 125 MiB, over the
// 64 MiB body limit; here 6 of 10 KiB over 35 KiB): a page over the limit is
// asked for again with half the limit, and the list completes.
TEST(InformerPaging, APageOverTheBodyLimitIsAskedForWithASmallerLimit) {
  sim::Simulator sim;
  for (int i = 1; i <= 6; ++i)
    ASSERT_TRUE(CreateSandbox(sim, "s" + std::to_string(i),
                              {{"example.com/notes", std::string(10 << 10, 'n')}})
                    .ok());
  Harness h([&](const kube::HttpRequest& r) -> Result<kube::HttpResponse> {
    return FromSim(AskSimAccepting(sim, r));
  });
  h.transport->SetMaxBodyBytes(35 << 10);
  kube::Informer informer(*h.client, SandboxRef(), h.Options());
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s)) << informer.sync_state().reason;
  EXPECT_EQ(informer.store().size(), 6u);
  EXPECT_EQ(informer.stats().decode_errors, 0);
  // 500 .. 3 are too large (3 fit), then the rest at 6.
  EXPECT_EQ(ListLimits(*h.transport), (std::vector<int>{500, 250, 125, 62, 31, 15, 7, 3, 6}));
  EXPECT_EQ(informer.stats().lists, 1);
  informer.Stop();
}

// A single item over the body limit is skipped like an undecodable one:
// counted, identified through a metadata-only page, and the others listed. If
// it was cached before it grew, its cached state stays (fail closed).
TEST(InformerPaging, ASingleItemOverTheBodyLimitIsSkippedAndCounted) {
  sim::Simulator sim;
  for (const char* name : {"a", "b", "big", "c"}) ASSERT_TRUE(CreateSandbox(sim, name, {}).ok());
  Harness h([&](const kube::HttpRequest& r) -> Result<kube::HttpResponse> {
    return FromSim(AskSimAccepting(sim, r));
  });
  h.transport->SetMaxBodyBytes(8 << 10);
  kube::Informer informer(*h.client, SandboxRef(), h.Options(2));
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(10s)) << informer.sync_state().reason;
  ASSERT_TRUE(Eventually([&] { return h.streams.Count("sandboxes") == 1; }));
  const kube::CachedPtr big = informer.store().Get("ns-a", "big");
  ASSERT_NE(big, nullptr);

  // "big" grows over the limit by itself; a 410 makes the informer relist.
  const auto& kind = *sim::FindKind("agents.x-k8s.io", "sandboxes");
  ASSERT_TRUE(sim.store()
                  .Mutate(
                      kind, "ns-a", "big",
                      [](json::value& o) -> std::optional<sim::ApiFailure> {
                        o.as_object()["spec"].as_object()["padding"] = std::string(16 << 10, 'p');
                        return std::nullopt;
                      },
                      false)
                  .ok());
  ASSERT_TRUE(CreateSandbox(sim, "d", {}).ok());
  h.transport->ClearRequests();
  h.streams.Latest("sandboxes")
      ->Send(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
  ASSERT_TRUE(Eventually([&] { return informer.stats().lists == 2 && informer.HasSynced(); }));
  ASSERT_TRUE(Eventually([&] { return informer.store().Get("ns-a", "d") != nullptr; }));
  EXPECT_EQ(informer.store().size(), 5u);
  EXPECT_EQ(informer.store().Get("ns-a", "big"), big);  // the last readable state
  EXPECT_EQ(informer.stats().decode_errors, 1);
  // [a b] fits; [big c] is too large, [big] too, so its metadata is read; then [c], [d].
  EXPECT_EQ(ListLimits(*h.transport), (std::vector<int>{2, 2, 1, -1, 1, 2}));
  informer.Stop();
}

TEST(InformerSync, ARelistThatKeepsFailingAfterA410IsNotSyncedAndSaysWhy) {
  sim::Simulator sim;
  ASSERT_TRUE(Load(sim, kFiveSandboxes).ok());
  std::mutex mu;
  std::condition_variable cv;
  bool failing = false;
  int failures = 0;
  Harness h([&](const kube::HttpRequest& r) -> Result<kube::HttpResponse> {
    std::unique_lock lock(mu);
    if (failing && IsList(r.target, "sandboxes")) {
      // Two relists fail; the third waits for the test, holding the informer still.
      if (++failures < 3) return FromSim(sim::FailureReply(500, "InternalError", "etcd is down"));
      cv.wait(lock, [&] { return !failing; });
    }
    lock.unlock();
    return FromSim(AskSim(sim, r));
  });
  reconciler::CacheScope scope;
  scope.namespaces = {"ns-a"};
  scope.informer = h.Options();
  reconciler::InformerCache cache(*h.client, scope);
  // However the test ends, the held request is let go before the cache stops.
  struct Release {
    std::function<void()> fn;
    ~Release() { fn(); }
  } release{[&] {
    std::lock_guard lock(mu);
    failing = false;
    cv.notify_all();
  }};
  cache.Start();
  ASSERT_TRUE(Eventually([&] { return cache.Synced() && h.streams.Count("sandboxes") == 1; }));
  for (const auto& c : cache.Checks()) EXPECT_TRUE(c.ok) << c.name << ": " << c.reason;

  {
    std::lock_guard lock(mu);
    failing = true;
  }
  h.streams.Latest("sandboxes")
      ->Send(
          R"json({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too old resource version: 5 (17)","reason":"Expired","code":410}})json");
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard lock(mu);
    return failures >= 3;
  }));  // the informer has seen two failed relists and is in its third
  ASSERT_TRUE(Eventually([&] { return !cache.Synced(); }));
  const auto checks = cache.Checks();
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_EQ(checks[0].name, "informer sandboxes/ns-a");
  EXPECT_FALSE(checks[0].ok);
  EXPECT_NE(checks[0].reason.find("listing failed"), std::string::npos) << checks[0].reason;
  EXPECT_NE(checks[0].reason.find("etcd is down"), std::string::npos) << checks[0].reason;
  EXPECT_EQ(checks[1].name, "informer networkpolicies/ns-a");
  EXPECT_TRUE(checks[1].ok);
  EXPECT_TRUE(checks[2].ok);
  EXPECT_EQ(cache.informers()[0]->store().size(), 5u);  // kept, but not trusted

  {
    std::lock_guard lock(mu);
    failing = false;
  }
  cv.notify_all();
  ASSERT_TRUE(Eventually([&] { return cache.Synced(); }));
  for (const auto& c : cache.Checks()) EXPECT_TRUE(c.ok && c.reason.empty()) << c.name;
  cache.Stop();
}

// A raw API: a fixed list body, watches driven by the test.
struct RawApi {
  std::string list_body;
  Harness h{[this](const kube::HttpRequest&) -> Result<kube::HttpResponse> {
    kube::HttpResponse r;
    r.status = 200;
    r.body = list_body;
    return r;
  }};
};

// Waits until the informer has read up to resourceVersion `rv`.
void ReadUpTo(kube::Informer& informer, const std::string& rv) {
  ASSERT_TRUE(Eventually([&] { return informer.stats().resource_version == rv; }));
}

// Why the cache is not synced quotes the unusable body, cut between characters.
TEST(TextCuts, AnUnusableListBodyIsQuotedCutOnACharacterBoundary) {
  for (const std::string pad : {"", "x"}) {
    RawApi api;
    api.list_body = Accents(pad);
    kube::Informer informer(*api.h.client, SandboxRef(), api.h.Options());
    informer.Start();
    ASSERT_TRUE(Eventually([&] {
      return informer.stats().lists >= 1 && !informer.HasSynced() &&
             informer.sync_state().reason.find("unusable") != std::string::npos;
    }));
    const std::string reason = informer.sync_state().reason;
    EXPECT_TRUE(ValidUtf8(reason)) << reason;
    EXPECT_NE(reason.find("\xc3\xa9..."), std::string::npos) << reason;
    informer.Stop();
  }
}

TEST(InformerWatch, UndecodableEventsKeepTheLastStateButDeletesApplyByUid) {
  RawApi api;
  api.list_body = ListBody({Item("a", "", "1"), Item("b", "", "2"), Item("c", "", "3")});
  kube::Informer informer(*api.h.client, SandboxRef(), api.h.Options());
  std::vector<std::pair<kube::ChangeType, std::string>> changes;
  std::mutex mu;
  informer.Subscribe([&](const kube::Change& c) {
    std::lock_guard lock(mu);
    changes.emplace_back(c.type, c.name);
  });
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(30s));
  ASSERT_TRUE(Eventually([&] { return api.h.streams.Count("sandboxes") == 1; }));
  const kube::CachedPtr a_before = informer.store().Get("ns", "a");
  auto stream = api.h.streams.Latest("sandboxes");
  const int deep = kMaxObjectDepth + 1;
  stream->Send(Event("MODIFIED", DeepItem("a", deep, "10")));  // keeps a's last state
  stream->Send(Event("ADDED", DeepItem("new", deep, "11")));   // keeps nothing
  // A DELETED names b with another uid: not the cached b, so b stays.
  stream->Send(Event("DELETED", R"({"metadata":{"name":"b","namespace":"ns","uid":"other",)"
                                R"("resourceVersion":"12"},"spec":)" +
                                    Nest(deep) + "}"));
  stream->Send("{not json");
  stream->Send(Event("DELETED", DeepItem("c", deep, "13")));  // c is gone whatever its body
  ReadUpTo(informer, "13");
  EXPECT_EQ(informer.store().Get("ns", "a"), a_before);
  EXPECT_EQ(informer.store().Get("ns", "new"), nullptr);
  EXPECT_NE(informer.store().Get("ns", "b"), nullptr);
  EXPECT_EQ(informer.store().Get("ns", "c"), nullptr);
  EXPECT_EQ(informer.stats().decode_errors, 5);
  {
    std::lock_guard lock(mu);
    ASSERT_EQ(changes.size(), 4u);  // three ADDED from the list, one DELETED
    EXPECT_EQ(changes[3], std::pair(kube::ChangeType::kDeleted, std::string("c")));
  }
  EXPECT_TRUE(informer.HasSynced());

  // A relist whose item for a cannot be decoded keeps a's cached state
  // (same uid); b, now absent from the list, is deleted.
  api.list_body =
      ListBody({DeepItem("a", deep, "20"), Item("d", "", "21")}, R"({"resourceVersion":"30"})");
  stream->Send(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})");
  ReadUpTo(informer, "30");
  EXPECT_EQ(informer.store().Get("ns", "a"), a_before);
  EXPECT_EQ(informer.store().Get("ns", "b"), nullptr);
  EXPECT_NE(informer.store().Get("ns", "d"), nullptr);
  EXPECT_EQ(informer.stats().decode_errors, 6);
  EXPECT_TRUE(informer.HasSynced());
  informer.Stop();
}

// Parsed, cached, replaced and destroyed on the informer's thread without
// recursion per level (run under ASan at -O0, where a recursive destructor
// of 10,000 levels overflows the thread's stack).
TEST(InformerWatch, TenThousandLevelObjectsAreCachedReplacedAndDestroyed) {
  RawApi api;
  api.list_body = ListBody({DeepItem("deep", kMaxObjectDepth, "1")});
  kube::Informer informer(*api.h.client, SandboxRef(), api.h.Options());
  std::atomic<int> deep_changes{0};
  informer.Subscribe([&](const kube::Change& c) {
    if (kube::DeeperThan(*kube::JsonOf(c.object), kMaxObjectDepth - 1)) ++deep_changes;
  });
  informer.Start();
  ASSERT_TRUE(informer.WaitForSync(30s));
  ASSERT_TRUE(Eventually([&] { return api.h.streams.Count("sandboxes") == 1; }));
  auto stream = api.h.streams.Latest("sandboxes");
  stream->Send(Event("MODIFIED", DeepItem("deep", kMaxObjectDepth, "2")));
  stream->Send(Event("MODIFIED", Item("deep", "", "3")));
  stream->Send(Event("ADDED", DeepItem("deep2", kMaxObjectDepth, "4")));
  stream->Send(Event("DELETED", DeepItem("deep2", kMaxObjectDepth, "5")));
  ReadUpTo(informer, "5");
  EXPECT_EQ(deep_changes.load(), 4);
  EXPECT_EQ(informer.stats().decode_errors, 0);
  EXPECT_EQ(informer.store().size(), 1u);
  informer.Stop();
}

TEST(DecodeErrorMetric, EveryKindIsThereFromTheStartAndCountsTotals) {
  reconciler::Metrics m;
  for (const char* kind : {"sandboxes", "networkpolicies", "pods"}) {
    EXPECT_NE(
        m.Render().find(std::string("fencekeeper_decode_errors_total{kind=\"") + kind + "\"} 0"),
        std::string::npos)
        << kind;
  }
  m.DecodeErrors("sandboxes", 3);
  m.DecodeErrors("sandboxes", 2);  // a total never goes back
  m.DecodeErrors("pods", 1);
  const std::string text = m.Render();
  EXPECT_NE(text.find(R"(fencekeeper_decode_errors_total{kind="sandboxes"} 3)"), std::string::npos)
      << text;
  EXPECT_NE(text.find(R"(fencekeeper_decode_errors_total{kind="pods"} 1)"), std::string::npos);
}

// ---- the controller against hostile objects ---------------------------------------------

// Every sandbox here but healthy-* runs under a fence it was not admitted
// to: each must be suspended exactly once, whatever else its JSON holds.
std::string HostileScenario(const std::string& long_name) {
  std::string s = R"(
namespaces:
  - name: agents
    fence: {boundaryPort: 5500}
    sandboxes:
      - {name: healthy-1, mode: Running}
      - {name: healthy-2, mode: Running}
)";
  for (const std::string& name :
       {std::string("stale-1"), std::string("stale-2"), std::string("deep-64"),
        std::string("deep-5000"), std::string("big-annotation"), std::string("bad-utf8"),
        std::string("big-numbers"), std::string("control-chars"), std::string("dup-keys"),
        std::string("wrong-annotations"), std::string("wrong-spec"), std::string("wrong-values"),
        long_name}) {
    s += "      - {name: " + name + ", mode: Running, admittedFenceGeneration: 0}\n";
  }
  return s;
}

// Nest(depth) as a value, built through a value_stack in linear time.
json::value NestValue(int depth) {
  json::value_stack st;
  st.reset();
  for (int i = 0; i < depth; ++i) st.push_key("a");
  st.push_int64(1);
  for (int i = 0; i < depth; ++i) st.push_object(1);
  return st.release();
}

class HostileCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    sim::SimOptions o;
    o.bookmark_interval = 50ms;
    sim_ = std::make_unique<sim::Simulator>(o);
    ASSERT_TRUE(Load(*sim_, HostileScenario(long_name_)).ok());
    server_ = std::make_unique<sim::Server>(*sim_, sim::ServerOptions{});
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    if (controller_) controller_->Stop();
  }
  static const sim::ResourceKind& Sandboxes() {
    return *sim::FindKind("agents.x-k8s.io", "sandboxes");
  }
  // Edits a stored sandbox (the simulator holds any JSON value).
  void Edit(const std::string& name, const std::function<void(json::object&)>& edit) {
    auto o = sim_->store().Mutate(
        Sandboxes(), "agents", name,
        [&](json::value& obj) -> std::optional<sim::ApiFailure> {
          edit(obj.as_object());
          return std::nullopt;
        },
        false);
    ASSERT_TRUE(o.ok()) << name;
  }
  json::object& Annotations(json::object& sb) {
    return sb["metadata"].as_object()["annotations"].as_object();
  }
  // A new stale sandbox like stale-1, for the watch stream.
  void CreateLike(const std::string& name, const std::function<void(json::object&)>& edit) {
    json::value sb = sim_->store().Get(Sandboxes(), "agents", "stale-1").object;
    json::object& meta = sb.as_object()["metadata"].as_object();
    meta = json::object{
        {"name", name}, {"labels", meta["labels"]}, {"annotations", meta["annotations"]}};
    edit(sb.as_object());
    ASSERT_TRUE(sim_->store().Create(Sandboxes(), "agents", std::move(sb)).ok()) << name;
  }
  std::string Uid(const std::string& name) {
    return kube::MetadataString(sim_->store().Get(Sandboxes(), "agents", name).object, "uid");
  }
  std::string Mode(const std::string& name) {
    auto o = sim_->store().Get(Sandboxes(), "agents", name);
    const json::object* spec = kube::ObjectField(o.object, "spec");
    return kube::StringField(spec, "operatingMode").value_or("?");
  }
  void StartController() {
    auto j = journal::Journal::Open(path_);
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
    kube::ClusterConfig cfg;
    cfg.server = server_->url();
    kube::ClientOptions co;
    co.initial_backoff = 20ms;
    auto c = kube::ApiClient::Create(cfg, co);
    ASSERT_TRUE(c.ok());
    client_ = std::move(*c);
    reconciler::ControllerOptions o;
    o.resync = 30ms;
    o.informer.initial_backoff = 10ms;
    o.informer.max_backoff = 100ms;
    o.retry_base = 10ms;
    o.retry_max = 200ms;
    controller_ = std::make_unique<reconciler::Controller>(*client_, *journal_, o);
    controller_->Start();
  }
  int64_t Rows(const std::string& sql, const std::string& name) {
    SQLite::Database db(path_, SQLite::OPEN_READONLY);
    SQLite::Statement q(db, sql);
    q.bind(1, name);
    return q.executeStep() ? q.getColumn(0).getInt64() : -1;
  }
  const kube::Informer& SandboxInformer() { return *controller_->informers()[0]; }

  const std::string long_name_ = std::string(63, 'a') + "." + std::string(63, 'b') + "." +
                                 std::string(63, 'c') + "." + std::string(61, 'd');
  testing::TempDir dir_;
  std::string path_ = dir_.File("journal.db");
  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<sim::Server> server_;
  std::unique_ptr<journal::Journal> journal_;
  std::unique_ptr<kube::ApiClient> client_;
  std::unique_ptr<reconciler::Controller> controller_;
};

// Records of skipped objects that match, to count them.
int Skipped(const log::Capture& log, const std::string& context, const std::string& name,
            const std::string& uid_prefix, const std::string& error_prefix) {
  int n = 0;
  for (const log::Record& r : log.Matching(log::Level::kWarn, "skipping an undecodable object")) {
    n += r.Get("informer") == "sandboxes/*" && r.Get("context") == context &&
         r.Get("name") == name && r.Get("uid").value_or("").rfind(uid_prefix, 0) == 0 &&
         r.Get("error").value_or("").rfind(error_prefix, 0) == 0;
  }
  return n;
}

TEST_F(HostileCluster, BadObjectsStayLocalAndEveryStaleSandboxIsSuspendedOnce) {
  // In the store (so they can be PATCHed): odd but valid JSON.
  Edit("deep-64", [](json::object& sb) { sb["spec"].as_object()["extra"] = NestValue(62); });
  Edit("deep-5000", [](json::object& sb) { sb["spec"].as_object()["extra"] = NestValue(4998); });
  Edit("big-annotation",
       [&](json::object& sb) { Annotations(sb)["example.com/blob"] = std::string(1 << 20, 'x'); });
  Edit("bad-utf8",
       [&](json::object& sb) { Annotations(sb)["example.com/bytes"] = "\xff\xfe\xc3("; });
  Edit("big-numbers", [](json::object& sb) {
    sb["spec"].as_object()["huge"] = 1e300;
    sb["spec"].as_object()["unsigned"] = std::numeric_limits<uint64_t>::max();
  });
  Edit("control-chars", [&](json::object& sb) {
    Annotations(sb)["example.com/note"] = std::string("a\nfake log line\r\x01\x1b[31m\0z", 24);
  });
  // Wrong types in what decide reads: fail closed, so suspended like the rest.
  Edit("wrong-annotations",
       [](json::object& sb) { sb["metadata"].as_object()["annotations"] = 42; });
  Edit("wrong-spec", [](json::object& sb) { sb["spec"].as_object()["operatingMode"] = 7; });
  Edit("wrong-values", [&](json::object& sb) {
    Annotations(sb)[kube::kFenceGenerationAnnotation] = 0;
    Annotations(sb)[kube::kFenceUidAnnotation] = json::array{"x"};
    sb["metadata"].as_object()["generation"] = "two";
  });
  std::vector<std::string> suspended = {
      "stale-1",    "stale-2",      "deep-64",       "deep-5000", "big-annotation",
      "bad-utf8",   "big-numbers",  "control-chars", "dup-keys",  "wrong-annotations",
      "wrong-spec", "wrong-values", long_name_};

  // The first sandbox list is the real one with raw hostile items spliced in
  // (JSON the simulator cannot hold: duplicate keys, too deep, wrong shapes).
  std::string list =
      sim::HandleRequest(*sim_,
                         {"GET",
                          "/apis/agents.x-k8s.io/v1beta1/namespaces/agents/"
                          "sandboxes?labelSelector=openshell.ai%2Fmanaged-by%3Dopenshell",
                          "", ""},
                         "sim")
          .body;
  sim_->ResetCounts();
  const std::string dup = R"("name":"dup-keys")";
  ASSERT_NE(list.find(dup), std::string::npos);
  list.replace(list.find(dup), dup.size(), R"("name":"someone-else","name":"dup-keys")");
  const std::string too_deep = R"({"metadata":{"name":"too-deep-in-list","namespace":"agents",)"
                               R"("uid":"u-too-deep"},"spec":)" +
                               Nest(kMaxObjectDepth) + "}";
  const size_t items_end = list.rfind(']');
  list.insert(items_end, "," + too_deep + R"(,42,{"metadata":{"name":["x"]}})");
  sim::FaultRule rule;
  rule.verb = "list";
  rule.resource = "sandboxes";
  rule.status = 200;
  rule.body = list;
  sim_->AddFault(rule);

  const log::Capture log;
  StartController();
  ASSERT_TRUE(Eventually([&] { return controller_->Synced(); }));

  // On the watch: the same kinds of objects arriving as events.
  CreateLike("late-deep-5000",
             [](json::object& sb) { sb["spec"].as_object()["x"] = NestValue(4998); });
  CreateLike("late-big", [&](json::object& sb) {
    Annotations(sb)["example.com/blob"] = std::string(1 << 20, 'y');
  });
  CreateLike("late-utf8",
             [&](json::object& sb) { Annotations(sb)["example.com/bytes"] = "\xc3\x28"; });
  suspended.insert(suspended.end(), {"late-deep-5000", "late-big", "late-utf8"});
  // A too-deep DELETED of healthy-2 (right uid) still removes it from the
  // cache; a too-deep MODIFIED of healthy-1 keeps its last state.
  const std::string healthy2 = R"({"metadata":{"name":"healthy-2","namespace":"agents","uid":")" +
                               Uid("healthy-2") + R"(","resourceVersion":"1"},"spec":)" +
                               Nest(kMaxObjectDepth) + "}";
  const std::string healthy1 = R"({"metadata":{"name":"healthy-1","namespace":"agents","uid":")" +
                               Uid("healthy-1") + R"(","resourceVersion":"1"},"spec":)" +
                               Nest(kMaxObjectDepth) + "}";
  // Seen by the informer: its watch is open, and the lines below reach it.
  ASSERT_TRUE(
      Eventually([&] { return SandboxInformer().store().Get("agents", "late-utf8") != nullptr; }));
  sim_->InjectWatchLine(Event("MODIFIED", healthy1));
  sim_->InjectWatchLine(Event("DELETED", healthy2));
  sim_->InjectWatchLine("{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"x\"");

  // (Counting PATCHes, not reading the objects: a copy of a deep one is slow.)
  ASSERT_TRUE(Eventually([&] {
    for (const auto& name : suspended) {
      if (sim_->RequestCount("patch", "sandboxes", name) == 0) return false;
    }
    return controller_->stats().applied >= static_cast<int>(suspended.size()) &&
           SandboxInformer().store().Get("agents", "healthy-2") == nullptr;
  })) <<
      [&] {
        std::string s;
        for (const auto& name : suspended) s += name.substr(0, 20) + "=" + Mode(name) + " ";
        return s;
      }();
  const int passes = controller_->stats().resync_passes;
  ASSERT_TRUE(Eventually([&] { return controller_->stats().resync_passes >= passes + 5; }));

  // One PATCH per sandbox, and one more only for a recorded conflict: the
  // simulated agent-sandbox controller may write a new sandbox between the
  // informer's event and the PATCH, whose resourceVersion then no longer
  // matches (409; re-decided on the fresh object). A PATCH sent twice
  // without one would fail here.
  int conflicts = 0;
  for (const auto& name : suspended) {
    EXPECT_EQ(Mode(name), "Suspended") << name;
    const int conflicted = static_cast<int>(
        Rows("SELECT count(*) FROM transitions WHERE sandbox = ? AND outcome = 'conflict'", name));
    conflicts += conflicted;
    EXPECT_EQ(sim_->RequestCount("patch", "sandboxes", name), 1 + conflicted) << name;
    EXPECT_EQ(
        Rows("SELECT count(*) FROM transitions WHERE sandbox = ? AND outcome = 'applied'", name), 1)
        << name;
  }
  EXPECT_EQ(sim_->RequestCount("patch", "sandboxes"),
            static_cast<int>(suspended.size()) + conflicts);
  EXPECT_EQ(Mode("healthy-1"), "Running");
  EXPECT_NE(SandboxInformer().store().Get("agents", "healthy-1"), nullptr);
  // The three bad list items and the three bad lines, each once in the log
  // with what identity could be read.
  EXPECT_GE(SandboxInformer().stats().decode_errors, 6);
  EXPECT_EQ(Skipped(log, "list item", "too-deep-in-list", "u-too-deep", "item cannot be decoded"),
            1);
  EXPECT_EQ(Skipped(log, "DELETED watch event", "healthy-2", "", ""), 1);
  EXPECT_GE(reconciler::DecodeErrorTotals(controller_->informers())["sandboxes"], 6);
  EXPECT_TRUE(controller_->Synced());
}

}  // namespace
}  // namespace fk
