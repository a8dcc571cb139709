// Kubernetes Events (issue 17): sent only under the leadership fence, with
// names the API server accepts however long the sandbox's name, and notes cut
// on a character boundary.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <functional>
#include <set>

#include "domain/dns_names.h"
#include "fake_transport.h"
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

  // What the API server answers each POST (201 Created unless a test says otherwise).
  std::function<kube::HttpResponse()> answer = [] {
    return kube::HttpResponse{201, "{}", "application/json", std::nullopt};
  };

  explicit Recorder(int senders = 0) {
    auto t = std::make_unique<kube::FakeTransport>(
        [this](const kube::HttpRequest&) -> Result<kube::HttpResponse> { return answer(); });
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

const FailClosedEvent kEvent{"ns",          "sb",  "uid-1", domain::ApiVersion::kV1beta1,
                             "fence-stale", "why", 7};

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

// One Event, one POST to the events of its namespace, with the body of
// docs/design.md#events; every Event gets a name of its own.
TEST(EventRecorderTest, AnEventIsPostedToItsNamespacesEventsOnceWithItsBody) {
  Recorder r;
  r.fence = r.time.MonotonicNow() + 10s;
  r.events->Publish(kEvent);
  r.events->Publish(kEvent);
  r.events->SendQueued();
  ASSERT_EQ(r.Posts(), 2);
  std::set<std::string> names;
  for (const auto& request : r.transport->requests()) {
    EXPECT_EQ(request.target, "/apis/events.k8s.io/v1/namespaces/ns/events");
    const json::value e = json::parse(request.body);
    EXPECT_EQ(e.at("metadata").at("namespace").as_string(), "ns");
    EXPECT_EQ(e.at("reportingInstance").as_string(), "test");
    EXPECT_EQ(e.at("note").as_string(), "fence-stale: why (journal seq 7)");
    const json::value& regarding = e.at("regarding");
    EXPECT_EQ(regarding.at("apiVersion").as_string(), "agents.x-k8s.io/v1beta1");
    EXPECT_EQ(regarding.at("kind").as_string(), "Sandbox");
    EXPECT_EQ(regarding.at("namespace").as_string(), "ns");
    EXPECT_EQ(regarding.at("name").as_string(), "sb");
    names.insert(std::string(e.at("metadata").at("name").as_string()));
  }
  EXPECT_EQ(names.size(), 2u);
  EXPECT_EQ(r.events->stats().created, 2);
}

// One attempt and at most one retry, the same POST under the same name (so
// an answer lost after the Event was created cannot make a second one); an
// answer that the Event exists already is not retried either, and counts as
// created (the attempt whose answer was lost created it), not as failed.
TEST(EventRecorderTest, AFailedPostIsRetriedOnceAndAnExistingEventIsNotRetried) {
  Recorder r;
  r.fence = r.time.MonotonicNow() + 10s;
  r.answer = [] {
    return kube::HttpResponse{503, R"({"kind":"Status","code":503})", "application/json", {}};
  };
  r.events->Publish(kEvent);
  r.events->SendQueued();
  EXPECT_EQ(r.Posts(), 2);
  const auto requests = r.transport->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].body, requests[1].body);
  EXPECT_EQ(r.events->stats().failed, 1);
  EXPECT_EQ(r.events->stats().created, 0);
  r.answer = [] {
    return kube::HttpResponse{
        409, R"({"kind":"Status","reason":"AlreadyExists","code":409})", "application/json", {}};
  };
  r.events->Publish(kEvent);
  r.events->SendQueued();
  EXPECT_EQ(r.Posts(), 3);
  EXPECT_EQ(r.events->stats().created, 1);
  EXPECT_EQ(r.events->stats().failed, 1);  // the first Event's, still
  r.events->SendQueued();                  // settled, not queued again
  EXPECT_EQ(r.Posts(), 3);
}

// The fence that falls between the attempt and its retry: the retry is not
// sent, and the Event has failed (it is not queued again).
TEST(EventRecorderTest, ARetryIsNotSentOnceTheFenceIsDown) {
  Recorder r;
  r.fence = r.time.MonotonicNow() + 10s;
  r.answer = [&r] {
    r.fence.reset();
    return kube::HttpResponse{503, R"({"kind":"Status","code":503})", "application/json", {}};
  };
  r.events->Publish(kEvent);
  r.events->SendQueued();
  EXPECT_EQ(r.Posts(), 1);
  EXPECT_EQ(r.events->stats().failed, 1);
  r.fence = r.time.MonotonicNow() + 10s;
  r.events->SendQueued();
  EXPECT_EQ(r.Posts(), 1);
}

TEST(EventRecorderTest, AFullOrStoppedRecorderDropsAndCountsWhatItIsGiven) {
  Recorder r;  // holds 4
  for (int i = 0; i < 5; ++i) r.events->Publish(kEvent);
  EXPECT_EQ(r.events->stats().dropped, 1);
  r.events->Stop();
  EXPECT_EQ(r.events->stats().dropped, 5);
  r.events->Publish(kEvent);
  EXPECT_EQ(r.events->stats().dropped, 6);
  r.fence = r.time.MonotonicNow() + 10s;
  r.events->SendQueued();
  EXPECT_EQ(r.Posts(), 0);
}

// A namespace that cannot be put in a path: no request, and the Event failed.
TEST(EventRecorderTest, AnEventWhoseNamespaceIsNoNameFailsWithoutARequest) {
  Recorder r;
  r.fence = r.time.MonotonicNow() + 10s;
  FailClosedEvent odd = kEvent;
  odd.ns = "../kube-system";
  r.events->Publish(odd);
  r.events->SendQueued();
  EXPECT_EQ(r.Posts(), 0);
  EXPECT_TRUE(r.transport->requests().empty());
  EXPECT_EQ(r.events->stats().failed, 1);
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
