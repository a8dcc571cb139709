// Kubernetes Events (issue 17): sent only under the leadership fence, with
// names the API server accepts however long the sandbox's name, and notes cut
// on a character boundary.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <set>

#include "domain/dns_names.h"
#include "kube/fake_transport.h"
#include "reconciler/event_recorder.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
using namespace std::chrono_literals;
namespace json = boost::json;

struct Recorder {
  ManualTimeSource time;
  Metrics metrics;
  kube::FakeTransport* transport = nullptr;
  std::unique_ptr<kube::ApiClient> client;
  std::optional<MonoTime> fence;  // what the fence says now
  std::unique_ptr<EventRecorder> events;

  explicit Recorder(int senders = 0) {
    auto t = std::make_unique<kube::FakeTransport>(
        [](const kube::HttpRequest&) -> Result<kube::HttpResponse> {
          return kube::HttpResponse{201, "{}", "application/json", std::nullopt};
        });
    transport = t.get();
    kube::ClientOptions co;
    co.time = &time;
    co.max_retries = 0;
    client = kube::ApiClient::CreateWithTransport({}, co, std::move(t));
    events = std::make_unique<EventRecorder>(*client, "test", time, senders, 4, &metrics,
                                             [this] { return fence; });
  }
  int Posts() const { return transport->Count("POST"); }
};

const FailClosedEvent kEvent{"ns", "sb", "uid-1", "v1beta1", "fence-stale", "why", 7};

TEST(EventRecorderTest, AnEventIsSentOnlyWhileTheWriteFenceHolds) {
  Recorder r;
  r.events->Publish(kEvent);
  r.events->Publish(kEvent);
  r.events->SendQueued();  // the fence is down (not leading yet, or no longer)
  EXPECT_EQ(r.Posts(), 0);
  EXPECT_EQ(r.events->stats().created, 0);
  r.fence = r.time.MonotonicNow() + 10s;
  r.events->SendQueued();  // held: both go, in order, each bounded by the fence
  EXPECT_EQ(r.Posts(), 2);
  EXPECT_EQ(r.events->stats().created, 2);
  EXPECT_LE(r.transport->requests().back().timeout, 10s);
  r.fence.reset();
  r.events->Publish(kEvent);
  r.events->SendQueued();
  EXPECT_EQ(r.Posts(), 2);
  // The term ends with it still queued: dropped, and counted.
  r.events->Stop();
  EXPECT_EQ(r.events->stats().dropped, 1);
  EXPECT_EQ(r.Posts(), 2);
}

TEST(EventRecorderTest, SendersHoldEventsWhileTheFenceIsDownAndDropThemCountedAtStop) {
  Recorder r(/*senders=*/2);
  for (int i = 0; i < 6; ++i) r.events->Publish(kEvent);  // the queue holds 4
  // Each sender has found the fence down at least once (and looks again).
  ASSERT_TRUE(fk::testing::Eventually([&] { return r.events->stats().fenced >= 4; }));
  EXPECT_EQ(r.Posts(), 0);
  r.events->Stop();
  EXPECT_EQ(r.Posts(), 0);
  EXPECT_EQ(r.events->stats().dropped, 6);
  EXPECT_EQ(r.events->stats().created + r.events->stats().failed, 0);
}

// docs/design.md#held-sandboxes: a hold is Normal (nothing went wrong now),
// names the stale fence and says how to resume; a transition stays a Warning.
TEST(EventBodyTest, AHeldEventIsNormalFailClosedHeldAndSaysHowToResume) {
  FailClosedEvent held = kEvent;
  held.kind = FailClosedEvent::Kind::kHeld;
  held.note = "already fail-closed; fence generation 1 -> 2";
  const json::value h = json::parse(EventJson(held, "test", ManualTimeSource().Now(), 1));
  EXPECT_EQ(h.at("type").as_string(), "Normal");
  EXPECT_EQ(h.at("reason").as_string(), "FailClosedHeld");
  EXPECT_EQ(h.at("action").as_string(), "Hold");
  EXPECT_EQ(h.at("reportingController").as_string(), "openshell.ai/fencekeeper");
  EXPECT_EQ(h.at("regarding").at("uid").as_string(), "uid-1");
  const std::string note(h.at("note").as_string());
  EXPECT_NE(note.find("fence generation 1 -> 2"), std::string::npos) << note;
  EXPECT_NE(note.find("openshell sandbox start"), std::string::npos) << note;
  const json::value t = json::parse(EventJson(kEvent, "test", ManualTimeSource().Now(), 1));
  EXPECT_EQ(t.at("type").as_string(), "Warning");
  EXPECT_EQ(t.at("reason").as_string(), "FailClosedSuspended");
  EXPECT_EQ(t.at("action").as_string(), "Suspend");
  EXPECT_EQ(std::string(t.at("note").as_string()).find("openshell sandbox start"),
            std::string::npos);
}

TEST(EventRecorderTest, AHeldEventWaitsForTheWriteFenceLikeATransitionEvent) {
  Recorder r;
  FailClosedEvent held = kEvent;
  held.kind = FailClosedEvent::Kind::kHeld;
  r.events->Publish(held);
  r.events->SendQueued();
  EXPECT_EQ(r.Posts(), 0);
  r.fence = r.time.MonotonicNow() + 10s;
  r.events->SendQueued();
  ASSERT_EQ(r.Posts(), 1);
  EXPECT_NE(r.transport->requests().back().body.find("FailClosedHeld"), std::string::npos);
}

TEST(EventNameTest, ALongSandboxNameStillGivesAValidUniqueEventName) {
  const std::string name = std::string(240, 'a') + "-" + std::string(12, 'b');  // 253
  ASSERT_TRUE(domain::IsDns1123Subdomain(name));
  FailClosedEvent e = kEvent;
  e.name = name;
  const WallTime now = ManualTimeSource().Now();
  std::set<std::string> names;
  for (uint64_t unique : {1ull, 2ull, 0x10ull, 0xffffffffull}) {
    const json::value event = json::parse(EventJson(e, "test", now, unique));
    const std::string n(event.at("metadata").at("name").as_string());
    EXPECT_LE(n.size(), 253u) << n;
    EXPECT_TRUE(domain::IsDns1123Subdomain(n)) << n;
    EXPECT_EQ(n.substr(0, 200), name.substr(0, 200));
    names.insert(n);
  }
  EXPECT_EQ(names.size(), 4u);
  // A cut that would end on '-' or '.' backs up to a letter or digit.
  for (size_t at = 200; at < 253; ++at) {
    std::string odd = name;
    odd[at] = at % 2 ? '-' : '.';
    if (!domain::IsDns1123Subdomain(odd)) continue;
    EXPECT_TRUE(domain::IsDns1123Subdomain(EventName(odd, "18b2f3c4d5e6f7a81"))) << at;
  }
  EXPECT_EQ(EventName("sb", "1f"), "sb.1f");
}

TEST(EventNoteTest, ALongNoteIsCutOnACharacterBoundary) {
  FailClosedEvent e = kEvent;
  e.note = "x";
  for (int i = 0; i < 700; ++i) e.note += "\xc3\xa9";  // é, two bytes each
  for (const std::string pad : {"", "y"}) {            // a cut at either parity
    FailClosedEvent p = e;
    p.note = pad + e.note;
    const std::string body = EventJson(p, "test", ManualTimeSource().Now(), 1);
    boost::system::error_code ec;
    const json::value event = json::parse(body, ec);  // Boost.JSON rejects invalid UTF-8
    ASSERT_FALSE(ec) << ec.message();
    const std::string note(event.at("note").as_string());
    EXPECT_LE(note.size(), 1024u);
    EXPECT_TRUE(note.ends_with("\xc3\xa9..."));
  }
}

}  // namespace
}  // namespace fk::reconciler
