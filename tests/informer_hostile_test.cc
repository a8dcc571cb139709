// Hostile input stays local in the informers (docs/design.md#bad-objects-stay-local,
// issue 9): paging restarts on an expired continue token and shrinks a page
// over the body limit; an item over it alone is skipped and counted; an
// undecodable watch event keeps the last state (a DELETED still applies by
// uid); an informer whose relist keeps failing is not synced and says why.
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
#include "sim/store.h"
#include "test_support.h"

namespace fk {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;
using fk::testing::Accents;
using fk::testing::DeepItem;
using fk::testing::Event;
using fk::testing::Eventually;
using fk::testing::Item;
using fk::testing::ListBody;
using fk::testing::Load;
using fk::testing::Nest;
using fk::testing::ValidUtf8;
using kube::kMaxObjectDepth;

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

kube::ResourceRef SandboxRef() { return kube::SandboxResource(domain::ApiVersion::kV1beta1); }

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
  // A relist publishes its resourceVersion just before it swaps the store in
  // (whole: b leaves as d arrives).
  ASSERT_TRUE(Eventually([&] { return informer.store().Get("ns", "d") != nullptr; }));
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

}  // namespace
}  // namespace fk
