// Leader election and its write fence (docs/design.md#leadership-fence-and-write-deadline), on a
// manual clock: against the simulator over HTTP for the Lease semantics, and
// over a FakeTransport where a test needs to see or stretch a single request.
#include <gtest/gtest.h>

#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json.hpp>
#include <map>
#include <regex>

#include "fake_transport.h"
#include "journal/journal.h"
#include "kube/client.h"
#include "kube/json_fields.h"
#include "reconciler/leader.h"
#include "sim/server.h"
#include "sim/simulator.h"
#include "sim/store.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
namespace json = boost::json;
using namespace std::chrono_literals;

void AdvanceTo(ManualTimeSource& time, MonoTime t) {
  time.Advance(std::chrono::duration_cast<std::chrono::milliseconds>(t - time.MonotonicNow()));
}

class LeaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    sim_ = std::make_unique<sim::Simulator>();
    server_ = std::make_unique<sim::Server>(*sim_, sim::ServerOptions{});
    ASSERT_TRUE(server_->Start().ok());
  }
  void TearDown() override {
    electors_.clear();
    clients_.clear();
    server_.reset();
    sim_.reset();
  }
  // An elector with its own client, both on the manual clock.
  LeaderElector& Elector(const std::string& identity, journal::Journal* journal = nullptr) {
    kube::ClusterConfig config;
    config.server = server_->url();
    kube::ClientOptions co;
    co.time = &time_;
    auto client = kube::ApiClient::Create(config, co);
    EXPECT_TRUE(client.ok());
    clients_.push_back(std::move(*client));
    LeaderOptions lo;
    lo.identity = identity;
    lo.time = &time_;
    electors_.push_back(std::make_unique<LeaderElector>(*clients_.back(), lo, journal));
    return *electors_.back();
  }
  std::string Holder() {
    auto o = sim_->store().Get(*sim::FindKind("coordination.k8s.io", "leases"), "default",
                               "fencekeeper");
    if (!o.ok()) return "<none>";
    return kube::StringField(kube::ObjectField(o.object, "spec"), "holderIdentity").value_or("");
  }
  // Every lease request fails from now on.
  void BreakTheApiServer() { sim_->AddFault({"*", "leases", 503, 0, false, "", -1}); }

  std::unique_ptr<sim::Simulator> sim_;
  std::unique_ptr<sim::Server> server_;
  ManualTimeSource time_;
  std::vector<std::unique_ptr<kube::ApiClient>> clients_;
  std::vector<std::unique_ptr<LeaderElector>> electors_;
};

TEST_F(LeaderTest, MayWriteOnlyWithinTheRenewDeadlineOfTheLastSuccess) {
  LeaderElector& e = Elector("a");
  EXPECT_FALSE(e.MayWrite());  // never acquired
  EXPECT_FALSE(e.WriteFenceUntil());
  const MonoTime started = time_.MonotonicNow();
  ASSERT_TRUE(e.TryAcquireOrRenew());
  EXPECT_EQ(Holder(), "a");
  EXPECT_TRUE(e.MayWrite());
  // A write sent now must be on the wire by then (its deadline): the
  // simulation's seed 365 sent one 9 s late, after the lease had lapsed.
  EXPECT_EQ(e.WriteFenceUntil(), started + 10s);
  time_.Advance(9999ms);
  EXPECT_TRUE(e.MayWrite());
  time_.Advance(1ms);  // renew deadline (10 s) since the acquisition started, no renewal
  EXPECT_FALSE(e.MayWrite());

  ASSERT_TRUE(e.TryAcquireOrRenew());
  EXPECT_TRUE(e.MayWrite());
  const MonoTime renewed = time_.MonotonicNow();
  BreakTheApiServer();
  time_.Advance(2s);
  EXPECT_FALSE(e.TryAcquireOrRenew());             // failed renewals do not move the fence...
  EXPECT_LE(time_.MonotonicNow() - renewed, 10s);  // ...and their retries stay inside it
  AdvanceTo(time_, renewed + 10s);
  EXPECT_FALSE(e.MayWrite());
}

// A fake API server holding one Lease, for tests that watch single requests.
struct FakeLeaseServer {
  std::optional<json::value> lease;
  int rv = 0;
  Result<kube::HttpResponse> Handle(const kube::HttpRequest& r) {
    if (r.method == "GET") {
      if (!lease)
        return kube::HttpResponse{
            404, R"({"kind":"Status","reason":"NotFound","code":404})", "", {}};
      return kube::HttpResponse{200, json::serialize(*lease), "application/json", {}};
    }
    json::value body = json::parse(r.body);
    if (r.method == "PUT" && json::value_to<std::string>(
                                 body.at("metadata").at("resourceVersion")) != std::to_string(rv)) {
      return kube::HttpResponse{409, R"({"kind":"Status","reason":"Conflict","code":409})", "", {}};
    }
    body.at("metadata").as_object()["resourceVersion"] = std::to_string(++rv);
    lease = body;
    return kube::HttpResponse{
        r.method == "POST" ? 201 : 200, json::serialize(body), "application/json", {}};
  }
};

class LeaderOverFakeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto transport = std::make_unique<kube::FakeTransport>([this](const kube::HttpRequest& r) {
      if (on_request_) {
        if (auto answer = on_request_(r)) return *answer;
      }
      return leases_.Handle(r);
    });
    fake_ = transport.get();
    kube::ClientOptions co;
    co.time = &time_;
    client_ = kube::ApiClient::CreateWithTransport(kube::ClusterConfig{}, co, std::move(transport));
    LeaderOptions lo;
    lo.identity = "me";
    lo.time = &time_;
    elector_ = std::make_unique<LeaderElector>(*client_, lo, nullptr);
  }
  std::vector<std::string> Requests() {  // "METHOD timeout"
    std::vector<std::string> out;
    for (const auto& r : fake_->requests())
      out.push_back(r.method + " " + std::to_string(r.timeout.count()));
    return out;
  }

  ManualTimeSource time_;
  FakeLeaseServer leases_;
  std::function<std::optional<Result<kube::HttpResponse>>(const kube::HttpRequest&)> on_request_;
  kube::FakeTransport* fake_ = nullptr;
  std::unique_ptr<kube::ApiClient> client_;
  std::unique_ptr<LeaderElector> elector_;
};

TEST_F(LeaderOverFakeTest, EveryLeaseRequestIsBoundedByWhatRemainsOfTheRenewDeadline) {
  ASSERT_TRUE(elector_->TryAcquireOrRenew());
  time_.Advance(4s);
  ASSERT_TRUE(elector_->TryAcquireOrRenew());
  // Acquiring: one retry period; renewing 4 s into the fence: the 6 s left.
  EXPECT_EQ(Requests(),
            (std::vector<std::string>{"GET 2000", "POST 2000", "GET 6000", "PUT 6000"}));

  // The API server hangs: the lease GET takes all the time it is given, and
  // nothing is retried past the fence. The renewal ends when the fence does.
  fake_->ClearRequests();
  const MonoTime fence_end = time_.MonotonicNow() + 10s;
  time_.Advance(3s);
  on_request_ = [this](const kube::HttpRequest&) -> std::optional<Result<kube::HttpResponse>> {
    time_.Advance(fake_->requests().back().timeout);
    return Result<kube::HttpResponse>(Status::IOError("timed out"));
  };
  EXPECT_FALSE(elector_->TryAcquireOrRenew());
  EXPECT_EQ(Requests(), (std::vector<std::string>{"GET 7000"}));
  EXPECT_EQ(time_.MonotonicNow(), fence_end);
  EXPECT_FALSE(elector_->MayWrite());
}

TEST_F(LeaderOverFakeTest, TheFenceCountsFromTheStartOfTheRequestNotItsAnswer) {
  on_request_ = [this](const kube::HttpRequest& r) -> std::optional<Result<kube::HttpResponse>> {
    if (r.method == "POST") time_.Advance(3s);  // a slow API server: the answer comes 3 s later
    return std::nullopt;
  };
  const MonoTime started = time_.MonotonicNow();
  ASSERT_TRUE(elector_->TryAcquireOrRenew());
  AdvanceTo(time_, started + 10s - 1ms);
  EXPECT_TRUE(elector_->MayWrite());
  time_.Advance(1ms);
  EXPECT_FALSE(elector_->MayWrite());
}

TEST_F(LeaderTest, ASecondCandidateWaitsUntilTheLeaseIsNoLongerRenewed) {
  LeaderElector& a = Elector("a");
  LeaderElector& b = Elector("b");
  ASSERT_TRUE(a.TryAcquireOrRenew());
  for (int i = 0; i < 10; ++i) {  // a renews every 2 s; b never gets in
    EXPECT_FALSE(b.TryAcquireOrRenew());
    EXPECT_FALSE(b.MayWrite());
    time_.Advance(2s);
    ASSERT_TRUE(a.TryAcquireOrRenew());
  }
  EXPECT_FALSE(b.TryAcquireOrRenew());  // b saw a's last renewal now
  // a stops renewing. b waits a whole lease duration from when it last saw it change.
  time_.Advance(14999ms);
  EXPECT_FALSE(b.TryAcquireOrRenew());
  EXPECT_FALSE(a.MayWrite());  // long since past a's renew deadline
  time_.Advance(1ms);
  ASSERT_TRUE(b.TryAcquireOrRenew());
  EXPECT_EQ(Holder(), "b");
  EXPECT_TRUE(b.MayWrite());
  EXPECT_FALSE(a.TryAcquireOrRenew());
  EXPECT_FALSE(a.MayWrite());
}

TEST_F(LeaderTest, ALeaderThatSeesAnotherHolderStopsWritingAtOnce) {
  LeaderElector& a = Elector("a");
  ASSERT_TRUE(a.TryAcquireOrRenew());
  // Someone took the lease over (an operator, or a's renewals were lost on the way).
  auto o = sim_->store().Mutate(
      *sim::FindKind("coordination.k8s.io", "leases"), "default", "fencekeeper",
      [](json::value& v) -> std::optional<sim::ApiFailure> {
        v.at("spec").as_object()["holderIdentity"] = "intruder";
        return std::nullopt;
      },
      false);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(a.MayWrite());
  EXPECT_FALSE(a.TryAcquireOrRenew());
  EXPECT_FALSE(a.MayWrite());  // well before its renew deadline
}

// Runs the elector on the test's thread; `wait` advances the manual clock.
struct RunProbe {
  std::vector<std::string> calls;
  bool may_write_when_stopped = true;
};

class LeaderRunTest : public LeaderTest {
 protected:
  void SetUp() override {
    LeaderTest::SetUp();
    auto j = journal::Journal::Open(dir_.File("journal.db"));
    ASSERT_TRUE(j.ok()) << j.status().ToString();
    journal_ = std::move(*j);
  }
  void TearDown() override {
    LeaderTest::TearDown();
    journal_.reset();
  }
  LeaderExit Run(
      LeaderElector& e, const std::function<Status()>& on_started,
      const std::function<bool()>& should_stop = [] { return false; }) {
    return e.Run(
        [&] {
          probe_.calls.push_back("started");
          return on_started();
        },
        [&] {
          probe_.calls.push_back("stopped");
          probe_.may_write_when_stopped = e.MayWrite();
        },
        should_stop,
        [&](std::chrono::milliseconds d) {
          waits_.push_back(d);
          time_.Advance(d);
          return true;
        });
  }
  std::vector<std::string> Leadership() {
    SQLite::Database db(dir_.File("journal.db"), SQLite::OPEN_READONLY);
    SQLite::Statement q(db, "SELECT identity || ' ' || state FROM leadership ORDER BY seq");
    std::vector<std::string> out;
    while (q.executeStep()) out.push_back(q.getColumn(0).getString());
    return out;
  }

  testing::TempDir dir_;
  std::unique_ptr<journal::Journal> journal_;
  RunProbe probe_;
  std::vector<std::chrono::milliseconds> waits_;
};

TEST_F(LeaderRunTest, RenewalsFailingPastTheDeadlineStopTheWorkAndReturnLost) {
  LeaderElector& e = Elector("a", journal_.get());
  MonoTime acquired{};
  const LeaderExit exit = Run(e, [&] {
    acquired = time_.MonotonicNow();
    BreakTheApiServer();
    return Status::Ok();
  });
  EXPECT_EQ(exit, LeaderExit::kLost);
  EXPECT_EQ(probe_.calls, (std::vector<std::string>{"started", "stopped"}));
  EXPECT_FALSE(probe_.may_write_when_stopped);
  // Lost the moment the fence lapsed, not a retry period later.
  EXPECT_EQ(time_.MonotonicNow() - acquired, 10s);
  EXPECT_EQ(Leadership(), (std::vector<std::string>{"a acquired", "a lost"}));
  EXPECT_EQ(Holder(), "a");  // not released: the API server is down, and the lease simply expires
}

TEST_F(LeaderRunTest, TheRenewDeadlineCountsFromTheAcquisitionNotFromStartingWork) {
  LeaderElector& e = Elector("a", journal_.get());
  const LeaderExit exit = Run(e, [&] {
    time_.Advance(10s);  // on_started must return quickly; this one did not
    return Status::Ok();
  });
  EXPECT_EQ(exit, LeaderExit::kLost);
  EXPECT_EQ(sim_->RequestCount("update", "leases"), 0);  // no renewal after the fence lapsed
  EXPECT_TRUE(waits_.empty());
}

TEST_F(LeaderRunTest, AFailedStartReleasesTheLease) {
  LeaderElector& e = Elector("a", journal_.get());
  const LeaderExit exit = Run(e, [] { return Status::Internal("cannot start the controller"); });
  EXPECT_EQ(exit, LeaderExit::kStartFailed);
  EXPECT_EQ(probe_.calls, (std::vector<std::string>{"started", "stopped"}));
  EXPECT_EQ(Holder(), "");
  EXPECT_FALSE(e.MayWrite());
  EXPECT_EQ(Leadership(), (std::vector<std::string>{"a acquired", "a released"}));
  // Nobody has to wait out a lease duration.
  LeaderElector& b = Elector("b");
  EXPECT_TRUE(b.TryAcquireOrRenew());
}

TEST_F(LeaderRunTest, StoppingWhileLeadingStopsTheWorkThenReleases) {
  LeaderElector& e = Elector("a", journal_.get());
  int checks = 0;
  const LeaderExit exit = Run(
      e, [] { return Status::Ok(); }, [&] { return ++checks > 5; });
  EXPECT_EQ(exit, LeaderExit::kStopped);
  EXPECT_EQ(probe_.calls, (std::vector<std::string>{"started", "stopped"}));
  EXPECT_TRUE(probe_.may_write_when_stopped);  // the work stops before the lease goes
  EXPECT_FALSE(e.MayWrite());
  EXPECT_EQ(Holder(), "");
  EXPECT_GE(sim_->RequestCount("update", "leases"), 3);  // renewed while it led
  for (auto d : waits_) EXPECT_EQ(d, 2s);
  EXPECT_EQ(Leadership(), (std::vector<std::string>{"a acquired", "a released"}));
}

TEST_F(LeaderRunTest, WaitsForAHeldLeaseAndStopsWithoutLeading) {
  ASSERT_TRUE(Elector("a").TryAcquireOrRenew());
  LeaderElector& b = Elector("b", journal_.get());
  int checks = 0;
  const LeaderExit exit = Run(
      b, [] { return Status::Ok(); }, [&] { return ++checks > 3; });
  EXPECT_EQ(exit, LeaderExit::kStopped);
  EXPECT_TRUE(probe_.calls.empty());
  EXPECT_EQ(Holder(), "a");
  EXPECT_TRUE(Leadership().empty());
}

TEST(LeaderIdentity, IsTheHostNameAndARandomUuid) {
  const std::string a = LeaderIdentity("pod-0"), b = LeaderIdentity("pod-0");
  const std::regex uuid4(
      "pod-0_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  EXPECT_TRUE(std::regex_match(a, uuid4)) << a;
  EXPECT_TRUE(std::regex_match(b, uuid4)) << b;
  EXPECT_NE(a, b);
  EXPECT_EQ(a.size(), std::string("pod-0_").size() + 36);
}

}  // namespace
}  // namespace fk::reconciler
