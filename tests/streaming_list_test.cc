// Streaming lists (InformerOptions::streaming_list) against the simulator
// over real sockets, with each setting of its WatchList gate: served, the
// cache is filled at the initial-events-end bookmark and the same stream goes
// on as the watch; refused (422), the informer lists by pages from then on;
// accepted but never ended by a bookmark, it lists by pages once its timeout
// passes.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/json.hpp>
#include <set>

#include "client_fixture.h"
#include "kube/informer.h"
#include "kube/objects.h"
#include "sim/simulator.h"
#include "sim/store.h"
#include "test_support.h"

namespace fk::kube {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

using fk::testing::ClientTest;
using fk::testing::Eventually;
using fk::testing::kSandboxes;

class StreamingListTest : public ClientTest {
 protected:
  void Serve(sim::WatchListGate gate) {
    sim::SimOptions so;
    so.emulate_agent_sandbox = false;  // every write below is the test's own
    so.watch_list = gate;
    StartServer({}, so);
    Client();
    for (const char* name : {"a", "b", "c"})
      ASSERT_TRUE(client_->Send("POST", kSandboxes, SandboxJson(name), "application/json").ok());
  }
  void StartInformer(InformerOptions o = {}) {
    o.streaming_list = true;
    o.initial_backoff = 5ms;
    o.max_backoff = 50ms;
    if (!o.time) o.time = &informer_time_;
    informer_ = std::make_unique<Informer>(*client_,
                                           kube::SandboxResource(domain::ApiVersion::kV1beta1), o);
    informer_->Subscribe([this](const Change& c) {
      std::lock_guard lock(mu_);
      seen_.insert((c.type == ChangeType::kAdded      ? "A "
                    : c.type == ChangeType::kModified ? "M "
                                                      : "D ") +
                   c.name);
    });
    informer_->Start();
  }
  void TearDown() override {
    informer_.reset();
    ClientTest::TearDown();
  }
  std::multiset<std::string> Seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  // The server forgets the watch's resourceVersion: the informer relists.
  void Expire() {
    ASSERT_TRUE(Eventually([&] { return sim_->store().WatchCount() == 1; }));
    sim_->InjectWatchLine(
        R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","metadata":{},)"
        R"("status":"Failure","message":"too old resource version","reason":"Expired","code":410}})");
  }
  std::set<std::string> CachedNames() {
    std::set<std::string> out;
    informer_->store().ForEachKey("", [&](const NamespacedName& k) { out.insert(k.name.str()); });
    return out;
  }

  ManualTimeSource informer_time_;  // outlives informer_, whose thread may still be waiting on it
  std::unique_ptr<Informer> informer_;
  std::mutex mu_;
  std::multiset<std::string> seen_;
};

TEST_F(StreamingListTest, ServedTheCacheIsFilledAtTheBookmarkAndTheStreamGoesOnAsTheWatch) {
  Serve(sim::WatchListGate::kOn);
  StartInformer();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  EXPECT_EQ(CachedNames(), (std::set<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Seen(), (std::multiset<std::string>{"A a", "A b", "A c"}));
  // Changes after the bookmark arrive on the same stream: no LIST, one WATCH.
  ASSERT_TRUE(client_->Send("POST", kSandboxes, SandboxJson("d"), "application/json").ok());
  ASSERT_TRUE(client_->Send("DELETE", std::string(kSandboxes) + "/a", "", "").ok());
  // The cache changes first, then the subscribers hear it, then the
  // resourceVersion moves: wait for all three.
  const std::multiset<std::string> expected{"A a", "A b", "A c", "A d", "D a"};
  ASSERT_TRUE(Eventually([&] {
    return CachedNames() == std::set<std::string>{"b", "c", "d"} && Seen() == expected &&
           informer_->stats().resource_version ==
               std::to_string(sim_->store().CurrentResourceVersion());
  })) << informer_->stats().resource_version;
  EXPECT_EQ(Seen(), expected);  // nothing twice
  EXPECT_EQ(sim_->RequestCount("list", "sandboxes"), 0);
  EXPECT_EQ(sim_->RequestCount("watch", "sandboxes"), 1);
  const InformerStats s = informer_->stats();
  EXPECT_EQ(s.streaming_lists, 1);
  EXPECT_EQ(s.lists, 0);
  EXPECT_EQ(s.watches, 0);
  EXPECT_EQ(s.list_fallbacks, 0);
}

// Freed heap goes back during a streaming list, after each trim_every_bytes
// of events, and once more when the listing is the cache.
TEST_F(StreamingListTest, FreedHeapGoesBackDuringTheListAndAfterIt) {
  Serve(sim::WatchListGate::kOn);
  std::atomic<int> trims{0};
  InformerOptions o;
  o.return_freed_memory = [&] { ++trims; };
  o.trim_every_bytes = 1;  // after every event
  StartInformer(o);
  ASSERT_TRUE(informer_->WaitForSync(10s));
  EXPECT_EQ(trims, 3 + 1);  // three sandboxes, then the listing installed
  informer_.reset();

  trims = 0;
  o.trim_every_bytes = size_t{1} << 30;  // never during the list
  StartInformer(o);
  ASSERT_TRUE(informer_->WaitForSync(10s));
  EXPECT_EQ(trims, 1);
}

// A relist (after a 410) is a streaming list again; the cache it replaces
// was current, so the subscribers hear nothing twice.
TEST_F(StreamingListTest, ServedARelistAfterExpiryIsAStreamingListThatReplacesTheCache) {
  Serve(sim::WatchListGate::kOn);
  StartInformer();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  Expire();
  ASSERT_TRUE(Eventually([&] { return informer_->stats().expired == 1; }));
  ASSERT_TRUE(Eventually([&] { return informer_->stats().streaming_lists == 2; }));
  ASSERT_TRUE(client_->Send("DELETE", std::string(kSandboxes) + "/b", "", "").ok());
  const std::multiset<std::string> expected{"A a", "A b", "A c", "D b"};
  ASSERT_TRUE(Eventually([&] {
    return CachedNames() == std::set<std::string>{"a", "c"} && Seen() == expected;
  })) << Seen().size();
  EXPECT_EQ(informer_->stats().lists, 0);
}

TEST_F(StreamingListTest, RefusedWith422TheInformerListsByPagesFromThenOn) {
  Serve(sim::WatchListGate::kOff);
  StartInformer();
  ASSERT_TRUE(informer_->WaitForSync(10s));
  EXPECT_EQ(CachedNames(), (std::set<std::string>{"a", "b", "c"}));
  EXPECT_EQ(informer_->stats().streaming_lists, 1);
  EXPECT_EQ(informer_->stats().list_fallbacks, 1);
  EXPECT_EQ(informer_->stats().lists, 1);
  Expire();
  // Counted by the server once it answered (the informer counts a list as it starts it).
  ASSERT_TRUE(Eventually([&] { return sim_->RequestCount("list", "sandboxes") == 2; }));
  EXPECT_EQ(informer_->stats().lists, 2);
  EXPECT_EQ(informer_->stats().streaming_lists, 1);  // not asked again
  EXPECT_EQ(Seen(), (std::multiset<std::string>{"A a", "A b", "A c"}));
}

// A server that takes sendInitialEvents and never sends the bookmark (as
// test doubles that hang clients do): nothing is cached from its stream; when
// the timeout passes on the informer's clock it lists by pages.
TEST_F(StreamingListTest, WithoutTheBookmarkTheInformerListsByPagesOnceTheTimeoutPasses) {
  Serve(sim::WatchListGate::kSilent);
  InformerOptions o;
  o.initial_events_timeout = 30s;
  StartInformer(o);
  ASSERT_TRUE(Eventually([&] { return sim_->store().WatchCount() == 1; }));
  EXPECT_FALSE(informer_->HasSynced());
  EXPECT_EQ(informer_->store().size(), 0u);
  ASSERT_TRUE(Eventually([&] {
    informer_time_.Advance(1s);  // the watchdog's deadline is read once the stream opened
    return informer_->HasSynced();
  }));
  EXPECT_GE(informer_time_.MonotonicNow().time_since_epoch(), 30s);
  EXPECT_EQ(CachedNames(), (std::set<std::string>{"a", "b", "c"}));
  EXPECT_EQ(Seen(), (std::multiset<std::string>{"A a", "A b", "A c"}));
  EXPECT_EQ(informer_->stats().list_fallbacks, 1);
  EXPECT_EQ(informer_->stats().lists, 1);
  EXPECT_EQ(sim_->RequestCount("list", "sandboxes"), 1);
}

// One object the transform rejects is reported and skipped; the rest of the
// streaming list is cached.
TEST_F(StreamingListTest, AnObjectTheTransformRejectsIsSkippedAndTheRestCached) {
  Serve(sim::WatchListGate::kOn);
  InformerOptions o;
  o.transform = [](const DecodedObject& d) -> Result<CachedRef<Cached>> {
    if (d.name == "b") return Status::Corruption("unreadable");
    return CachedRef<Cached>(MakeCached<CachedJson>(d.object));
  };
  StartInformer(o);
  ASSERT_TRUE(informer_->WaitForSync(10s));
  EXPECT_EQ(CachedNames(), (std::set<std::string>{"a", "c"}));
  EXPECT_EQ(informer_->stats().decode_errors, 1);
  EXPECT_EQ(informer_->stats().list_fallbacks, 0);
}

// The simulator validates streaming-list parameters as the API server does.
TEST_F(StreamingListTest, TheServerRefusesInvalidStreamingListParameters) {
  Serve(sim::WatchListGate::kOn);
  const std::string base = std::string(kSandboxes) + "?watch=1";
  for (const std::string& query :
       {std::string("&sendInitialEvents=true"),
        std::string("&sendInitialEvents=true&resourceVersionMatch=Exact"),
        std::string("&resourceVersionMatch=NotOlderThan")}) {
    const ApiResult r = client_->Get(base + query);
    EXPECT_EQ(HttpCode(r), 422) << query;
    const std::string message = ApiErrorOf(r.status()).message;
    EXPECT_NE(message.find("resourceVersionMatch"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace fk::kube
