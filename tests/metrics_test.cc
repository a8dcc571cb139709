// The metrics an operator alerts on (issue 11): every series exists from the
// start at zero, and each moves by exactly what happened — a reconcile, a
// retry, an API answer, a journal append, an Event dropped.
#include <gtest/gtest.h>

#include "common/version.h"
#include "fake_transport.h"
#include "in_process_cluster.h"
#include "journal/journal.h"
#include "metric_sample.h"
#include "reconciler/event_recorder.h"
#include "reconciler/journal_metrics.h"
#include "reconciler/leader.h"
#include "reconciler/metrics.h"
#include "reconciler/work_queue.h"
#include "sim/simulator.h"
#include "test_support.h"

namespace fk::reconciler {
namespace {
using namespace std::chrono_literals;

using fk::testing::Sample;

TEST(MetricsTest, EverySeriesIsThereFromTheStartAtZero) {
  const std::string scrape = Metrics().Render();
  for (
      const char* series : {
          R"(fencekeeper_reconcile_total{result="success"})",
          R"(fencekeeper_reconcile_total{result="error"})",
          R"(fencekeeper_reconcile_total{result="requeue"})",
          "fencekeeper_reconcile_errors_total",
          "fencekeeper_reconcile_duration_seconds_count",
          "fencekeeper_workqueue_depth",
          "fencekeeper_workqueue_adds_total",
          "fencekeeper_workqueue_retries_total",
          "fencekeeper_workqueue_queue_duration_seconds_count",
          "fencekeeper_workqueue_work_duration_seconds_count",
          "fencekeeper_workqueue_unfinished_work_seconds",
          "fencekeeper_workqueue_longest_running_processor_seconds",
          R"(fencekeeper_api_requests_total{code="200",verb="GET"})",
          R"(fencekeeper_api_requests_total{code="500",verb="PATCH"})",
          R"(fencekeeper_api_requests_total{code="0",verb="WATCH"})",
          R"(fencekeeper_api_request_duration_seconds_count{verb="PATCH"})",
          R"(fencekeeper_transitions_total{outcome="applied",reason="fence-stale"})",
          R"(fencekeeper_transitions_total{outcome="failed",reason="fence-missing"})",
          R"(fencekeeper_transitions_total{outcome="conflict",reason="supervisor-generation-changed"})",
          "fencekeeper_journal_errors_total",
          "fencekeeper_journal_append_duration_seconds_count",
          "fencekeeper_journal_size_bytes",
          "fencekeeper_journal_wal_size_bytes",
          R"(fencekeeper_journal_events_appended_total{kind="suspend_intent"})",
          R"(fencekeeper_journal_events_appended_total{kind="forgotten"})",
          "fencekeeper_journal_pending_intents",
          "fencekeeper_journal_oldest_pending_intent_age_seconds",
          R"(fencekeeper_watch_restarts_total{resource="sandboxes"})",
          R"(fencekeeper_decode_errors_total{kind="pods"})",
          R"(fencekeeper_events_total{result="dropped"})",
          R"(fencekeeper_events_total{result="failed"})",
          R"(fencekeeper_sandboxes{verdict="suspend"})",
          "fencekeeper_leader",
          "fencekeeper_ready",
          // controller-runtime's and client-go's own names and label keys.
          R"(controller_runtime_reconcile_total{controller="sandbox",result="success"})",
          R"(controller_runtime_reconcile_total{controller="sandbox",result="error"})",
          R"(controller_runtime_reconcile_total{controller="sandbox",result="requeue"})",
          R"(controller_runtime_reconcile_total{controller="sandbox",result="requeue_after"})",
          R"(controller_runtime_reconcile_errors_total{controller="sandbox"})",
          R"(controller_runtime_reconcile_time_seconds_count{controller="sandbox"})",
          R"(controller_runtime_active_workers{controller="sandbox"})",
          R"(controller_runtime_max_concurrent_reconciles{controller="sandbox"})",
          R"(workqueue_depth{name="sandbox"})",
          R"(workqueue_adds_total{name="sandbox"})",
          R"(workqueue_retries_total{name="sandbox"})",
          R"(workqueue_queue_duration_seconds_count{name="sandbox"})",
          R"(workqueue_work_duration_seconds_count{name="sandbox"})",
          R"(workqueue_unfinished_work_seconds{name="sandbox"})",
          R"(workqueue_longest_running_processor_seconds{name="sandbox"})",
      })
    EXPECT_EQ(Sample(scrape, series), 0) << series << "\n" << scrape;
  // Only with leader election (a LeaderElector sets it), and no host before a request.
  EXPECT_EQ(scrape.find("\nleader_election_master_status{"), std::string::npos) << scrape;
  EXPECT_EQ(scrape.find("\nrest_client_requests_total{"), std::string::npos) << scrape;
  // 5 reasons x 4 outcomes, 5 verbs x 6 codes: all there before any happens.
  size_t transitions = 0, api = 0;
  for (size_t at = 0;
       (at = scrape.find("\nfencekeeper_transitions_total{", at + 1)) != std::string::npos;)
    ++transitions;
  for (size_t at = 0;
       (at = scrape.find("\nfencekeeper_api_requests_total{", at + 1)) != std::string::npos;)
    ++api;
  EXPECT_EQ(transitions, 20u);
  EXPECT_EQ(api, 30u);
  const std::string build = std::string("fencekeeper_build_info{commit=\"") + GitCommit() +
                            "\",version=\"" + Version() + "\"}";
  EXPECT_EQ(Sample(scrape, build), 1) << scrape;
}

TEST(MetricsTest, ProcessMetricsAreReadFromProc) {
  const std::string scrape = Metrics().Render();
  EXPECT_GT(Sample(scrape, "process_resident_memory_bytes"), 1e6);
  EXPECT_GT(Sample(scrape, "process_virtual_memory_bytes"), 1e6);
  EXPECT_GE(Sample(scrape, "process_cpu_seconds_total"), 0);
  EXPECT_GT(Sample(scrape, "process_open_fds"), 2);
  EXPECT_GT(Sample(scrape, "process_max_fds"), Sample(scrape, "process_open_fds"));
  // Started within the last day, not at boot or in 1970.
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(Sample(scrape, "process_start_time_seconds"), now, 86400) << scrape;
  EXPECT_NE(scrape.find("# TYPE process_cpu_seconds_total counter"), std::string::npos);
}

TEST(MetricsTest, ReconcileCountsByResultAndTimesEachOne) {
  Metrics m;
  m.Reconcile("success", 0.02);
  m.Reconcile("error", 0.5);
  m.Reconcile("requeue_after", 0.001);  // fencekeeper's family calls it requeue
  EXPECT_EQ(Sample(m, R"(fencekeeper_reconcile_total{result="success"})"), 1);
  EXPECT_EQ(Sample(m, R"(fencekeeper_reconcile_total{result="error"})"), 1);
  EXPECT_EQ(Sample(m, R"(fencekeeper_reconcile_total{result="requeue"})"), 1);
  EXPECT_EQ(Sample(m, "fencekeeper_reconcile_errors_total"), 1);
  EXPECT_EQ(Sample(m, "fencekeeper_reconcile_duration_seconds_count"), 3);
  EXPECT_DOUBLE_EQ(Sample(m, "fencekeeper_reconcile_duration_seconds_sum"), 0.521);

  const auto runtime = [&m](const std::string& family, const std::string& result = "") {
    return Sample(m, "controller_runtime_" + family + "{controller=\"sandbox\"" +
                         (result.empty() ? "" : ",result=\"" + result + "\"") + "}");
  };
  EXPECT_EQ(runtime("reconcile_total", "success"), 1);
  EXPECT_EQ(runtime("reconcile_total", "error"), 1);
  EXPECT_EQ(runtime("reconcile_total", "requeue_after"), 1);
  EXPECT_EQ(runtime("reconcile_total", "requeue"), 0);
  EXPECT_EQ(runtime("reconcile_errors_total"), 1);
  EXPECT_EQ(runtime("reconcile_time_seconds_count"), 3);
  EXPECT_DOUBLE_EQ(runtime("reconcile_time_seconds_sum"), 0.521);
  m.ActiveWorkers(+1);
  m.ActiveWorkers(+1);
  m.ActiveWorkers(-1);
  EXPECT_EQ(runtime("active_workers"), 1);
  m.MaxConcurrentReconciles(4);
  EXPECT_EQ(runtime("max_concurrent_reconciles"), 4);
}

// fencekeeper_workqueue_X and client-go's workqueue_X{name="sandbox"} say the
// same; the value, once checked they agree.
double Queue(const Metrics& m, const std::string& x) {
  const std::string scrape = m.Render();
  const double ours = Sample(scrape, "fencekeeper_workqueue_" + x);
  const double theirs = Sample(scrape, "workqueue_" + x + "{name=\"sandbox\"}");
  EXPECT_EQ(ours, theirs) << x;
  return theirs;
}

TEST(MetricsTest, WorkQueueReportsAddsRetriesWaitWorkAndUnfinishedOnTheTimeSource) {
  ManualTimeSource time;
  Metrics m;
  WorkQueue q(time, 10ms, 1s, &m);
  q.Add(ObjectKey{"ns", "a"});
  q.Add(ObjectKey{"ns", "a"});  // already queued: not another add
  EXPECT_EQ(Queue(m, "adds_total"), 1);
  EXPECT_EQ(Queue(m, "depth"), 1);
  time.Advance(2s);
  ASSERT_EQ(q.TryGet(), (ObjectKey{"ns", "a"}));
  EXPECT_EQ(Queue(m, "depth"), 0);
  EXPECT_EQ(Queue(m, "queue_duration_seconds_count"), 1);
  EXPECT_EQ(Queue(m, "queue_duration_seconds_sum"), 2);
  time.Advance(3s);
  q.ReportUnfinished();
  EXPECT_EQ(Queue(m, "unfinished_work_seconds"), 3);
  EXPECT_EQ(Queue(m, "longest_running_processor_seconds"), 3);
  q.AddRateLimited(ObjectKey{"ns", "a"});  // failed: back after its backoff
  EXPECT_EQ(Queue(m, "retries_total"), 1);
  q.Done(ObjectKey{"ns", "a"});
  EXPECT_EQ(Queue(m, "work_duration_seconds_count"), 1);
  EXPECT_EQ(Queue(m, "work_duration_seconds_sum"), 3);
  q.ReportUnfinished();
  EXPECT_EQ(Queue(m, "unfinished_work_seconds"), 0);
  time.Advance(1s);
  ASSERT_EQ(q.TryGet(), (ObjectKey{"ns", "a"}));  // the retry, due: one more add
  EXPECT_EQ(Queue(m, "adds_total"), 2);
}

// client-go's depth counts the keys waiting, a key re-added while a worker
// holds it included: it is waiting too, for Done.
TEST(MetricsTest, WorkQueueDepthCountsAKeyReAddedWhileItIsWorkedOn) {
  ManualTimeSource time;
  Metrics m;
  WorkQueue q(time, 10ms, 1s, &m);
  q.Add(ObjectKey{"ns", "a"});
  ASSERT_EQ(q.TryGet(), (ObjectKey{"ns", "a"}));
  EXPECT_EQ(Queue(m, "depth"), 0);
  q.Add(ObjectKey{"ns", "a"});  // changed while being reconciled: queued for after Done
  EXPECT_EQ(Queue(m, "depth"), 1);
  EXPECT_EQ(Queue(m, "adds_total"), 2);
  q.Add(ObjectKey{"ns", "b"});
  EXPECT_EQ(Queue(m, "depth"), 2);
  q.Done(ObjectKey{"ns", "a"});
  EXPECT_EQ(Queue(m, "depth"), 2);  // still two waiting
  ASSERT_TRUE(q.TryGet());
  ASSERT_TRUE(q.TryGet());
  EXPECT_EQ(Queue(m, "depth"), 0);
}

// unfinished_work_seconds sums the ages of the keys held now; longest is the
// oldest: both computed when scraped, from the time source.
TEST(MetricsTest, UnfinishedWorkSumsTheKeysInProgressAndLongestIsTheOldest) {
  ManualTimeSource time;
  Metrics m;
  WorkQueue q(time, 10ms, 1s, &m);
  q.Add(ObjectKey{"ns", "a"});
  q.Add(ObjectKey{"ns", "b"});
  ASSERT_EQ(q.TryGet(), (ObjectKey{"ns", "a"}));
  time.Advance(2s);
  ASSERT_EQ(q.TryGet(), (ObjectKey{"ns", "b"}));
  time.Advance(3s);
  q.ReportUnfinished();
  EXPECT_EQ(Queue(m, "unfinished_work_seconds"), 5 + 3);
  EXPECT_EQ(Queue(m, "longest_running_processor_seconds"), 5);
  q.Done(ObjectKey{"ns", "a"});
  q.ReportUnfinished();
  EXPECT_EQ(Queue(m, "unfinished_work_seconds"), 3);
  EXPECT_EQ(Queue(m, "longest_running_processor_seconds"), 3);
}

TEST(MetricsTest, ApiRequestsCountTheCodeAndTimeTheAnswer) {
  ManualTimeSource time;
  Metrics m;
  auto transport = std::make_unique<kube::FakeTransport>(
      [&](const kube::HttpRequest&) -> Result<kube::HttpResponse> {
        time.Advance(250ms);  // the API server takes its time
        return kube::HttpResponse{500, R"({"kind":"Status","code":500})", "application/json",
                                  std::nullopt};
      });
  kube::ClientOptions co;
  co.time = &time;
  co.max_retries = 0;
  co.on_request = [&m](const std::string& verb, int code, double seconds) {
    m.ApiRequest(verb, code, seconds, "10.96.0.1:443");
  };
  auto client = kube::ApiClient::CreateWithTransport({}, co, std::move(transport));
  EXPECT_FALSE(client->Send("GET", "/api/v1/namespaces/ns/pods/p", "", "").ok());
  EXPECT_EQ(Sample(m, R"(fencekeeper_api_requests_total{code="500",verb="GET"})"), 1);
  EXPECT_EQ(Sample(m, R"(fencekeeper_api_requests_total{code="200",verb="GET"})"), 0);
  EXPECT_EQ(Sample(m, R"(fencekeeper_api_request_duration_seconds_count{verb="GET"})"), 1);
  EXPECT_EQ(Sample(m, R"(fencekeeper_api_request_duration_seconds_sum{verb="GET"})"), 0.25);
  EXPECT_EQ(Sample(m, R"(fencekeeper_api_request_duration_seconds_bucket{verb="GET",le="0.1"})"),
            0);
  EXPECT_EQ(Sample(m, R"(fencekeeper_api_request_duration_seconds_bucket{verb="GET",le="0.25"})"),
            1);
  // client-go's families, by host.
  EXPECT_EQ(
      Sample(m, R"(rest_client_requests_total{code="500",host="10.96.0.1:443",method="GET"})"), 1);
  EXPECT_EQ(
      Sample(m, R"(rest_client_requests_total{code="200",host="10.96.0.1:443",method="GET"})"), 0);
  EXPECT_EQ(
      Sample(m, R"(rest_client_request_duration_seconds_count{host="10.96.0.1:443",verb="GET"})"),
      1);
  EXPECT_EQ(
      Sample(m, R"(rest_client_request_duration_seconds_sum{host="10.96.0.1:443",verb="GET"})"),
      0.25);
}

// rest_client_requests_total counts each answer by code and HTTP method as
// client-go does: no answer is code "<error>", a watch is a GET (counted,
// not timed), and a host's usual series are there from its first request.
TEST(MetricsTest, RestClientCountsByCodeMethodAndHost) {
  ManualTimeSource time;
  Metrics m;
  int status = 200;
  auto transport = std::make_unique<kube::FakeTransport>(
      [&](const kube::HttpRequest&) -> Result<kube::HttpResponse> {
        if (status == 0) return Status::IOError("connection refused");
        return kube::HttpResponse{status, "{}", "application/json", std::nullopt};
      });
  kube::ClusterConfig config;
  config.server = "https://api.example:6443/";
  const std::string host = kube::ApiHost(config.server);
  ASSERT_EQ(host, "api.example:6443");
  kube::ClientOptions co;
  co.time = &time;
  co.max_retries = 0;
  co.on_request = [&](const std::string& verb, int code, double seconds) {
    m.ApiRequest(verb, code, seconds, host);
  };
  auto client = kube::ApiClient::CreateWithTransport(config, co, std::move(transport));
  const auto requests = [&](const std::string& code, const std::string& method) {
    return Sample(m, "rest_client_requests_total{code=\"" + code + "\",host=\"" + host +
                         "\",method=\"" + method + "\"}");
  };
  EXPECT_TRUE(client->Get("/api/v1/pods").ok());
  EXPECT_TRUE(client->Get("/api/v1/pods").ok());
  status = 409;
  EXPECT_FALSE(client->MergePatch("/api/v1/namespaces/ns/pods/p", "{}").ok());
  status = 0;
  EXPECT_FALSE(client->MergePatch("/api/v1/namespaces/ns/pods/p", "{}").ok());
  status = 200;
  auto stream = client->OpenStream("/api/v1/pods?watch=1",
                                   {[](std::string_view) {}, [](const Status&, auto) {}});
  EXPECT_EQ(requests("200", "GET"), 3);  // two GETs and the watch
  EXPECT_EQ(requests("409", "PATCH"), 1);
  EXPECT_EQ(requests("<error>", "PATCH"), 1);
  EXPECT_EQ(requests("200", "PATCH"), 0);  // there from the host's first request
  EXPECT_EQ(requests("500", "POST"), 0);
  EXPECT_EQ(
      Sample(m, "rest_client_request_duration_seconds_count{host=\"" + host + "\",verb=\"GET\"}"),
      2);  // the watch is not timed
  EXPECT_EQ(m.Render().find("method=\"WATCH\""), std::string::npos);
}

TEST(MetricsTest, ApiHostIsTheServerUrlsHostAndPortAsWritten) {
  EXPECT_EQ(kube::ApiHost("https://10.96.0.1:443"), "10.96.0.1:443");
  EXPECT_EQ(kube::ApiHost("https://kubernetes.default.svc/"), "kubernetes.default.svc");
  EXPECT_EQ(kube::ApiHost("http://127.0.0.1:8001/prefix/path"), "127.0.0.1:8001");
  EXPECT_EQ(kube::ApiHost("https://[::1]:6443"), "[::1]:6443");
}

// leader_election_master_status{name=the Lease's name} (--leader-election-id):
// 0 while not holding the Lease, 1 from the acquisition until leadership ends.
TEST(MetricsTest, LeaderElectionMasterStatusIsOneExactlyWhileLeading) {
  ManualTimeSource time;
  sim::Simulator sim(sim::SimOptions{}, time);
  kube::ClientOptions co;
  co.time = &time;
  auto client = kube::ApiClient::CreateWithTransport(
      {}, co, fk::testing::InProcessTransport(sim, {}, /*host=*/""));
  Metrics m;
  LeaderOptions lo;
  lo.name = "my-lease";
  lo.identity = "me";
  lo.time = &time;
  lo.metrics = &m;
  LeaderElector elector(*client, lo, nullptr);
  const std::string series = R"(leader_election_master_status{name="my-lease"})";
  EXPECT_EQ(Sample(m, series), 0) << "there, at 0, before the first attempt";
  double while_leading = -1;
  int checks = 0;
  const LeaderExit exit = elector.Run(
      [&] {
        while_leading = Sample(m, series);
        return Status::Ok();
      },
      [] {}, [&] { return ++checks > 3; },
      [&](std::chrono::milliseconds d) {
        time.Advance(d);
        return true;
      });
  EXPECT_EQ(exit, LeaderExit::kStopped);
  EXPECT_EQ(while_leading, 1);
  EXPECT_EQ(Sample(m, series), 0) << "released";
}

TEST(MetricsTest, EventsCountCreatedFailedAndDropped) {
  ManualTimeSource time;
  Metrics m;
  int status = 201;
  auto transport = std::make_unique<kube::FakeTransport>(
      [&](const kube::HttpRequest&) -> Result<kube::HttpResponse> {
        return kube::HttpResponse{status, "{}", "application/json", std::nullopt};
      });
  kube::ClientOptions co;
  co.time = &time;
  co.max_retries = 0;
  auto client = kube::ApiClient::CreateWithTransport({}, co, std::move(transport));
  EventRecorder events(*client, "test", time, /*senders=*/0, /*capacity=*/1, &m);
  const FailClosedEvent e{"ns",          "sb",  "uid-1", domain::ApiVersion::kV1beta1,
                          "fence-stale", "why", 7};
  events.Publish(e);
  events.Publish(e);  // the queue holds one: dropped
  EXPECT_EQ(Sample(m, R"(fencekeeper_events_total{result="dropped"})"), 1);
  events.SendQueued();
  EXPECT_EQ(Sample(m, R"(fencekeeper_events_total{result="created"})"), 1);
  status = 403;
  events.Publish(e);
  events.SendQueued();
  EXPECT_EQ(Sample(m, R"(fencekeeper_events_total{result="failed"})"), 1);
  EXPECT_EQ(Sample(m, R"(fencekeeper_events_total{result="created"})"), 1);
}

TEST(MetricsTest, TotalsCountedElsewhereMoveByTheirIncreaseAndRestartWithATerm) {
  Metrics m;
  m.WatchRestarts("pods", 2);
  m.WatchRestarts("pods", 2);  // the same total again: no increase
  m.WatchRestarts("pods", 3);
  EXPECT_EQ(Sample(m, R"(fencekeeper_watch_restarts_total{resource="pods"})"), 3);
  m.NewTerm();  // the next term's informers count from zero
  m.WatchRestarts("pods", 1);
  EXPECT_EQ(Sample(m, R"(fencekeeper_watch_restarts_total{resource="pods"})"), 4);
  m.DecodeErrors("sandboxes", 2);
  EXPECT_EQ(Sample(m, R"(fencekeeper_decode_errors_total{kind="sandboxes"})"), 2);
}

domain::Event Intent(const std::string& name) {
  domain::Event e;
  e.ns = "ns";
  e.name = name;
  e.uid = "uid-" + name;
  domain::SuspendIntent i;
  i.reason = domain::Reason::kFenceStale;
  i.resource_version = "1";
  e.body = i;
  return e;
}

// A fresh journal on `time`'s clock.
std::unique_ptr<journal::Journal> OpenJournal(const fk::testing::TempDir& dir,
                                              ManualTimeSource& time) {
  journal::OpenOptions oo;
  oo.clock = &time;
  auto j = journal::Journal::Open(dir.File("journal.db"), oo);
  EXPECT_TRUE(j.ok()) << j.status().ToString();
  return j.ok() ? std::move(*j) : nullptr;
}

TEST(MetricsTest, JournalReportsSizesEventsByKindAndTheOldestPendingIntent) {
  fk::testing::TempDir dir;
  ManualTimeSource time;
  auto j = OpenJournal(dir, time);
  ASSERT_TRUE(j);
  Metrics m;
  ReportJournal(*j, m, time.Now());
  EXPECT_EQ(Sample(m, "fencekeeper_journal_pending_intents"), 0);
  EXPECT_EQ(Sample(m, "fencekeeper_journal_oldest_pending_intent_age_seconds"), 0);
  ASSERT_TRUE(j->Append({Intent("a")}).ok());
  time.Advance(10min);
  ASSERT_TRUE(j->Append({Intent("b")}).ok());
  time.Advance(5min);
  ReportJournal(*j, m, time.Now());
  EXPECT_EQ(Sample(m, "fencekeeper_journal_pending_intents"), 2);
  EXPECT_EQ(Sample(m, "fencekeeper_journal_oldest_pending_intent_age_seconds"), 900);
  EXPECT_EQ(Sample(m, R"(fencekeeper_journal_events_appended_total{kind="suspend_intent"})"), 2);
  EXPECT_EQ(Sample(m, R"(fencekeeper_journal_events_appended_total{kind="decided"})"), 0);
  EXPECT_GT(Sample(m, "fencekeeper_journal_size_bytes"), 0);
  EXPECT_GT(Sample(m, "fencekeeper_journal_wal_size_bytes"), 0);  // not checkpointed yet
  ReportJournal(*j, m, time.Now());  // the same totals again: no increase
  EXPECT_EQ(Sample(m, R"(fencekeeper_journal_events_appended_total{kind="suspend_intent"})"), 2);
}

// The chain head is one series whose labels are the head last logged: a new
// series at most every five minutes, not one per append, which made a series
// per scrape while sandboxes changed (issue 37). The seq now is a value.
TEST(MetricsTest, TheChainHeadSeriesChangesOnlyWhenTheHeadIsLogged) {
  fk::testing::TempDir dir;
  ManualTimeSource time;
  auto j = OpenJournal(dir, time);
  ASSERT_TRUE(j);
  Metrics m;
  ChainHeadLog log(5min);
  ASSERT_TRUE(j->Append({Intent("a")}).ok());
  ASSERT_TRUE(log.Tick(*j, time.MonotonicNow(), &m));
  const journal::chain::Head first = j->ChainHead();
  const auto series = [](const journal::chain::Head& h) {
    return "fencekeeper_journal_chain_head{hash=\"" + h.hash + "\",seq=\"" + std::to_string(h.seq) +
           "\"}";
  };
  EXPECT_EQ(Sample(m, series(first)), first.seq);
  for (const char* name : {"b", "c", "d"}) {  // appends and scrapes within five minutes
    ASSERT_TRUE(j->Append({Intent(name)}).ok());
    time.Advance(1min);
    EXPECT_FALSE(log.Tick(*j, time.MonotonicNow(), &m));
    ReportJournal(*j, m, time.Now());
    EXPECT_EQ(Sample(m, series(first)), first.seq) << "the logged head stays the series";
    EXPECT_EQ(Sample(m, "fencekeeper_journal_chain_seq"), j->ChainHead().seq);
  }
  time.Advance(2min);
  ASSERT_TRUE(log.Tick(*j, time.MonotonicNow(), &m));
  const std::string text = m.Render();
  EXPECT_EQ(text.find(first.hash), std::string::npos) << "the old head is gone";
  EXPECT_EQ(Sample(m, series(j->ChainHead())), j->ChainHead().seq);
}

// Logged when it changed, at most every `every`; not again while it stands still.
TEST(MetricsTest, TheChainHeadIsLoggedWhileItChangesAtMostEveryInterval) {
  fk::testing::TempDir dir;
  ManualTimeSource time;
  auto j = OpenJournal(dir, time);
  ASSERT_TRUE(j);
  ChainHeadLog log(5min);
  EXPECT_TRUE(log.Tick(*j, time.MonotonicNow()));  // the start: the genesis head
  EXPECT_FALSE(log.Tick(*j, time.MonotonicNow()));
  ASSERT_TRUE(j->Append({Intent("a")}).ok());
  time.Advance(1min);
  EXPECT_FALSE(log.Tick(*j, time.MonotonicNow())) << "changed, but logged a minute ago";
  time.Advance(4min);
  EXPECT_TRUE(log.Tick(*j, time.MonotonicNow()));
  time.Advance(30min);
  EXPECT_FALSE(log.Tick(*j, time.MonotonicNow())) << "unchanged";
  ASSERT_TRUE(j->Append({Intent("b")}).ok());
  EXPECT_TRUE(log.Tick(*j, time.MonotonicNow()));
}

TEST(MetricsTest, JournalTimesParse) {
  EXPECT_EQ(ParseJournalTime("1970-01-02T00:00:01.500Z"), 86401.5);
  EXPECT_EQ(ParseJournalTime("1970-01-02 00:00:01"), std::nullopt);
  EXPECT_EQ(ParseJournalTime(""), std::nullopt);
}

}  // namespace
}  // namespace fk::reconciler
