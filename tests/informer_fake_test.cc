// The informer (kube/informer.h) driven through a scripted ListerWatcher
// (fake_lister_watcher.h), no HTTP: the requests its watcher makes — pages
// and their continue tokens, the resourceVersion a watch resumes from, the
// relist after a 410, a streaming list and its fallbacks — and the cache
// they leave. Time is a ManualTimeSource: backoffs are recorded, not waited.
#include <gtest/gtest.h>

#include <condition_variable>
#include <functional>
#include <mutex>
#include <set>

#include "fake_lister_watcher.h"
#include "kube/informer.h"
#include "kube/objects.h"
#include "test_support.h"

namespace fk::kube {
namespace {
using namespace std::chrono_literals;
using fk::testing::BookmarkEventLine;
using fk::testing::ErrorAnswer;
using fk::testing::ErrorEventLine;
using fk::testing::EventLine;
using fk::testing::Eventually;
using fk::testing::FakeListerWatcher;
using fk::testing::ListPageAnswer;
using fk::testing::ScriptedWatch;

class InformerFakeTest : public ::testing::Test {
 protected:
  void Start(bool streaming_list = false) {
    InformerOptions o;
    o.ns = "ns";
    o.page_size = 2;
    o.time = &time_;
    o.jitter_seed = 1;
    o.streaming_list = streaming_list;
    o.watch_buffer_bytes = watch_buffer_bytes_;
    informer_ = std::make_unique<Informer>(fake_, SandboxResource(domain::ApiVersion::kV1beta1), o);
    if (subscriber_) informer_->Subscribe(subscriber_);
    informer_->Start();
  }
  void TearDown() override { informer_.reset(); }

  // Waits until the informer has opened `n` watches (the last one stays open
  // when unscripted, so the informer then rests there).
  bool WatchesOpened(size_t n) {
    return Eventually([&] { return fake_.watches().size() >= n; }, 10s);
  }
  // "name@rv" of every cached object (a fake object's uid is its name).
  std::set<std::string> Cache() const {
    std::set<std::string> out;
    for (const auto& cached : informer_->store().List())
      out.insert(cached->uid.str() + "@" + cached->resource_version.str());
    return out;
  }
  std::vector<std::string> ListTokens() const {
    std::vector<std::string> out;
    for (const ListRequest& r : fake_.lists()) out.push_back(r.continue_token);
    return out;
  }

  FakeListerWatcher fake_;
  ManualTimeSource time_;
  size_t watch_buffer_bytes_ = InformerOptions{}.watch_buffer_bytes;
  std::function<void(const Change&)> subscriber_;
  std::unique_ptr<Informer> informer_;
};

TEST_F(InformerFakeTest, ListsByPagesFollowingContinueThenWatchesFromTheListsVersion) {
  fake_.AddPage(ListPageAnswer({"a", "b"}, "10", "c1"));
  fake_.AddPage(ListPageAnswer({"c"}, "10"));
  Start();
  ASSERT_TRUE(WatchesOpened(1));
  EXPECT_TRUE(informer_->HasSynced());
  EXPECT_EQ(ListTokens(), (std::vector<std::string>{"", "c1"}));
  EXPECT_EQ(fake_.lists()[0].limit, 2);
  EXPECT_FALSE(fake_.lists()[0].metadata_only);
  EXPECT_EQ(Cache(), (std::set<std::string>{"a@10", "b@10", "c@10"}));
  const WatchRequest watch = fake_.watches()[0];
  EXPECT_EQ(watch.resource_version, "10");
  EXPECT_TRUE(watch.allow_bookmarks);
  EXPECT_FALSE(watch.send_initial_events);
  EXPECT_EQ(informer_->stats().pages, 2);
}

TEST_F(InformerFakeTest, AnExpiredContinueTokenStartsTheListOver) {
  fake_.AddPage(ListPageAnswer({"a", "b"}, "10", "c1"));
  fake_.AddPage(ErrorAnswer(410, "Expired"));
  fake_.AddPage(ListPageAnswer({"a", "b"}, "11", "c2"));
  fake_.AddPage(ListPageAnswer({"c"}, "11"));
  Start();
  ASSERT_TRUE(WatchesOpened(1));
  EXPECT_EQ(ListTokens(), (std::vector<std::string>{"", "c1", "", "c2"}));
  EXPECT_EQ(Cache(), (std::set<std::string>{"a@11", "b@11", "c@11"}));
  EXPECT_EQ(fake_.watches()[0].resource_version, "11");
  EXPECT_EQ(informer_->stats().list_restarts, 1);
  EXPECT_TRUE(time_.sleeps().empty());  // started over at once, no backoff
}

TEST_F(InformerFakeTest, AWatchThatEndsResumesFromTheLastResourceVersion) {
  fake_.AddPage(ListPageAnswer({"a"}, "10"));
  fake_.AddWatch({{EventLine("ADDED", "b", "11"), BookmarkEventLine("15")}, Status::Ok(), {}});
  Start();
  ASSERT_TRUE(WatchesOpened(2));
  EXPECT_EQ(fake_.watches()[0].resource_version, "10");
  EXPECT_EQ(fake_.watches()[1].resource_version, "15");  // the bookmark's, not b's
  EXPECT_EQ(fake_.lists().size(), 1u);
  EXPECT_EQ(Cache(), (std::set<std::string>{"a@10", "b@11"}));
  EXPECT_TRUE(time_.sleeps().empty());
}

TEST_F(InformerFakeTest, AnErrorEventWith410Relists) {
  fake_.AddPage(ListPageAnswer({"a"}, "10"));
  fake_.AddPage(ListPageAnswer({"b"}, "20"));
  fake_.AddWatch({{ErrorEventLine(410, "Expired")}, std::nullopt, {}});
  Start();
  ASSERT_TRUE(WatchesOpened(2));
  EXPECT_EQ(fake_.lists().size(), 2u);
  EXPECT_EQ(fake_.watches()[1].resource_version, "20");
  EXPECT_EQ(Cache(), (std::set<std::string>{"b@20"}));
  EXPECT_EQ(informer_->stats().expired, 1);
  EXPECT_TRUE(time_.sleeps().empty());  // a relist at once
}

TEST_F(InformerFakeTest, AStreamingListIsSwappedInAtTheInitialEventsEndBookmark) {
  fake_.AddWatch(
      {{EventLine("ADDED", "a", "5"), EventLine("ADDED", "b", "6"), EventLine("DELETED", "b", "6"),
        BookmarkEventLine("7", true), EventLine("MODIFIED", "a", "8")},
       std::nullopt,
       {}});
  Start(/*streaming_list=*/true);
  ASSERT_TRUE(Eventually([&] { return informer_->stats().resource_version == "8"; }, 10s));
  EXPECT_TRUE(informer_->HasSynced());
  EXPECT_EQ(Cache(), (std::set<std::string>{"a@8"}));
  ASSERT_EQ(fake_.watches().size(), 1u);  // the same stream went on as the watch
  EXPECT_TRUE(fake_.watches()[0].send_initial_events);
  EXPECT_TRUE(fake_.lists().empty());
  EXPECT_EQ(informer_->stats().streaming_lists, 1);
}

TEST_F(InformerFakeTest, AStreamingListRefusedWith422FallsBackToPagesForGood) {
  HttpResponse refused;
  refused.status = 422;
  refused.body = EncodeStatus(422, "Invalid", "sendInitialEvents is forbidden");
  fake_.AddWatch({{}, std::nullopt, refused});
  fake_.AddPage(ListPageAnswer({"a"}, "10"));
  fake_.AddWatch({{ErrorEventLine(410, "Expired")}, std::nullopt, {}});
  fake_.AddPage(ListPageAnswer({"b"}, "20"));
  Start(/*streaming_list=*/true);
  ASSERT_TRUE(WatchesOpened(3));
  const auto watches = fake_.watches();
  EXPECT_TRUE(watches[0].send_initial_events);
  EXPECT_FALSE(watches[1].send_initial_events);
  EXPECT_EQ(watches[1].resource_version, "10");
  EXPECT_FALSE(watches[2].send_initial_events);  // the relist was by pages too
  EXPECT_EQ(watches[2].resource_version, "20");
  EXPECT_EQ(fake_.lists().size(), 2u);
  EXPECT_EQ(Cache(), (std::set<std::string>{"b@20"}));
  EXPECT_EQ(informer_->stats().list_fallbacks, 1);
  EXPECT_EQ(informer_->stats().streaming_lists, 1);
}

TEST_F(InformerFakeTest, AStreamingListWithoutItsBookmarkInTimeFallsBackToPages) {
  fake_.AddWatch({{EventLine("ADDED", "a", "5")}, std::nullopt, {}});
  fake_.AddPage(ListPageAnswer({"a", "b"}, "10"));
  Start(/*streaming_list=*/true);
  // The watchdog's deadline is read from the clock when the stream opens:
  // move the clock on until it has passed.
  ASSERT_TRUE(Eventually(
      [&] {
        time_.Advance(30s);
        return !fake_.lists().empty();
      },
      10s));
  ASSERT_TRUE(WatchesOpened(2));
  EXPECT_EQ(fake_.watches()[1].resource_version, "10");
  EXPECT_EQ(Cache(), (std::set<std::string>{"a@10", "b@10"}));
  EXPECT_EQ(informer_->stats().list_fallbacks, 1);
}

// The watch's lines not yet handled are bounded: once they reach
// watch_buffer_bytes the stream is told its reader is behind (so the HTTP
// transport reads no more, http_transport_test.cc), and ready again once the
// informer took them.
TEST_F(InformerFakeTest, AWatchsUnhandledLinesPastItsBufferHoldTheStreamBack) {
  fake_.AddPage(ListPageAnswer({"a"}, "10"));
  watch_buffer_bytes_ = 4096;
  std::mutex mu;
  std::condition_variable cv;
  bool busy = false, let_go = false;
  subscriber_ = [&](const Change& change) {
    if (change.name != "b") return;
    std::unique_lock lock(mu);
    busy = true;
    cv.notify_all();
    cv.wait(lock, [&] { return let_go; });
  };
  auto release = [&] {
    std::lock_guard lock(mu);
    let_go = true;
    cv.notify_all();
  };
  // However the test ends, the subscriber is released and the informer
  // stopped before the state it uses goes.
  struct AtExit {
    std::function<void()> run;
    ~AtExit() { run(); }
  } at_exit{[&] {
    release();
    informer_.reset();
  }};
  Start();
  ASSERT_TRUE(WatchesOpened(1));
  const Transport::StreamCallbacks watch = fake_.last_watch_callbacks();
  ASSERT_TRUE(watch.ready);
  watch.on_line(EventLine("ADDED", "b", "11"));
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, 10s, [&] { return busy; }));  // the informer is held up
  }
  size_t queued = 0;
  int sent = 0;
  while (watch.ready()) {
    ASSERT_LT(queued, watch_buffer_bytes_) << "still ready past the buffer";
    const std::string line =
        EventLine("ADDED", "c" + std::to_string(sent), std::to_string(12 + sent));
    watch.on_line(line);
    queued += line.size();
    ++sent;
  }
  EXPECT_GE(queued, watch_buffer_bytes_);
  release();
  EXPECT_TRUE(Eventually([&] { return watch.ready(); }, 10s));
  EXPECT_TRUE(Eventually([&] { return Cache().size() == static_cast<size_t>(2 + sent); }, 10s));
}

}  // namespace
}  // namespace fk::kube
