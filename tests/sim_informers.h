// The real informers (kube::Informer under reconciler::InformerCache: list
// pages, watch streams, 410 and relist, dropped watches) over a fake transport
// into the in-process simulator, stepped by the simulation's scheduler.
//
// Each informer is a real thread, but it runs only when the scheduler hands it
// the turn, and hands the turn back at every point where it would wait on the
// world:
//   - before each request (a list page): the scheduler then serves it;
//   - when it has opened a watch (it then waits for lines of its own);
//   - at each backoff. A backoff does not move the clock and its length is
//     ignored: the informer draws its jitter from std::random_device, so the
//     scheduler, not the wait, decides when it ends — that keeps the run
//     exactly replayable.
// A watch's lines are queued as the simulator's store publishes them and
// handed to the informer by the scheduler, a few at a time; every hand-over
// ends with a bookmark at the last line's resourceVersion. Once the informer
// reports that resourceVersion (or parks again: the lines ended its watch), it
// has applied every line and notified the controller, and waits again. So at
// most one thread (a worker, an informer or the scheduler) acts at a time, in
// the order the seeded scheduler picks.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "common/clock.h"
#include "kube/transport.h"
#include "sim/handler.h"
#include "sim/simulator.h"
#include "sim/watch_lines.h"

namespace fk::testing {

class SteppedInformers {
 public:
  static constexpr int kCount = 3;  // one namespace: sandboxes, policies, pods (CacheKind order)
  enum class Waiting { kStarting, kRunning, kRequest, kWatch, kSleep };

  // `serve` answers one request of informer k (after the scheduler ran it).
  using Serve = std::function<Result<kube::HttpResponse>(int k, const kube::HttpRequest&)>;
  SteppedInformers(sim::Simulator& sim, TimeSource& clock, Serve serve)
      : sim_(sim), time_(*this, clock), serve_(std::move(serve)) {}
  ~SteppedInformers() { Abort(); }
  SteppedInformers(const SteppedInformers&) = delete;
  SteppedInformers& operator=(const SteppedInformers&) = delete;

  // The informers' clock: the world's time; a wait parks (see above).
  TimeSource& time() { return time_; }

  // The fake transport's handlers.
  Result<kube::HttpResponse> RoundTrip(const kube::HttpRequest& r) {
    const int k = KindOf(r.target);
    current_ = k;
    if (!Park(k, Waiting::kRequest))
      return Status::IOError("the process died before sending (crash injected)");
    return serve_(k, r);
  }
  std::unique_ptr<kube::Transport::Stream> OpenStream(const kube::HttpRequest& r,
                                                      kube::Transport::StreamCallbacks cb);

  // ---- the scheduler's side ---------------------------------------------------

  // After InformerCache::Start: every informer has reached its first request.
  void AwaitStarted() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [this] {
      if (aborted_) return true;
      for (int k = 0; k < kCount; ++k)
        if (parks_[k] == 0) return false;
      return true;
    });
  }
  Waiting waiting(int k) const {
    std::lock_guard lock(mu_);
    return state_[k];
  }
  // Lines queued for informer k's open watch, not yet handed over.
  size_t Pending(int k) const;
  // Informer k, parked at a request or a backoff, runs until it parks again.
  bool Resume(int k) {
    std::unique_lock lock(mu_);
    if (aborted_ || (state_[k] != Waiting::kRequest && state_[k] != Waiting::kSleep)) return false;
    const uint64_t parks = parks_[k];
    turn_ = k;
    cv_.notify_all();
    cv_.wait(lock, [&] { return parks_[k] != parks || aborted_; });
    return true;
  }
  // Hands up to `n` queued lines of k's watch over, and waits until they are
  // applied (`rv_of_informer` reads the informer's resourceVersion).
  bool Deliver(int k, size_t n, const std::function<std::string()>& rv_of_informer);
  // k's watch ends: cleanly (`error` false, as on a timeout or a dropped
  // connection) or with a transport error; or an ERROR 410 event ends it.
  bool EndWatch(int k, bool error, bool expired);

  // A crash: every parked informer fails its wait; none parks again.
  void Abort() {
    std::lock_guard lock(mu_);
    aborted_ = true;
    cv_.notify_all();
  }

 private:
  struct Feed;  // one open watch
  class Stream;
  class Clock final : public TimeSource {
   public:
    Clock(SteppedInformers& owner, TimeSource& world) : owner_(owner), world_(world) {}
    WallTime Now() const override { return world_.Now(); }
    MonoTime MonotonicNow() const override { return world_.MonotonicNow(); }
    bool SleepFor(std::chrono::milliseconds, Interrupt& interrupt) override {
      if (interrupt.fired() || current_ < 0) return false;
      return owner_.Park(current_, Waiting::kSleep) && !interrupt.fired();
    }

   private:
    SteppedInformers& owner_;
    TimeSource& world_;
  };

  static int KindOf(const std::string& target) {
    if (target.find("/sandboxes") != std::string::npos) return 0;
    if (target.find("/networkpolicies") != std::string::npos) return 1;
    return 2;
  }
  static constexpr int kScheduler = -1;

  // On informer k's thread: hands the turn back and waits for it.
  bool Park(int k, Waiting why) {
    std::unique_lock lock(mu_);
    if (aborted_) return false;
    state_[k] = why;
    ++parks_[k];
    turn_ = kScheduler;
    cv_.notify_all();
    cv_.wait(lock, [&] { return turn_ == k || aborted_; });
    state_[k] = Waiting::kRunning;
    return !aborted_;
  }
  // On informer k's thread: hands the turn back and goes on into a wait of its
  // own (its watch's lines), touching nothing shared until lines arrive.
  void Yield(int k, Waiting why) {
    std::lock_guard lock(mu_);
    state_[k] = why;
    ++parks_[k];
    turn_ = kScheduler;
    cv_.notify_all();
  }

  sim::Simulator& sim_;
  Clock time_;
  Serve serve_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int turn_ = kScheduler;
  Waiting state_[kCount] = {Waiting::kStarting, Waiting::kStarting, Waiting::kStarting};
  uint64_t parks_[kCount] = {0, 0, 0};
  std::shared_ptr<Feed> watch_[kCount];
  bool aborted_ = false;
  inline static thread_local int current_ = -1;  // the informer this thread runs
};

// One open watch: the store's events as lines, queued until handed over.
struct SteppedInformers::Feed {
  kube::Transport::StreamCallbacks callbacks;
  sim::Route route;
  sim::WatchParams params;
  uint64_t store_watch = 0;
  std::mutex mu;  // the store's sink pushes under the store's lock
  std::deque<std::pair<std::string, int64_t>> lines;  // line, its resourceVersion
  bool ended = false;

  size_t Pending() {
    std::lock_guard lock(mu);
    return lines.size();
  }
  // Ends the stream once (the callbacks' inbox is the informer's).
  void End(const Status& s) {
    {
      std::lock_guard lock(mu);
      if (ended) return;
      ended = true;
    }
    callbacks.on_end(s, std::nullopt);
  }
};

class SteppedInformers::Stream final : public kube::Transport::Stream {
 public:
  Stream(SteppedInformers& owner, int k, std::shared_ptr<Feed> feed)
      : owner_(owner), k_(k), feed_(std::move(feed)) {}
  ~Stream() override {
    feed_->End(Status::IOError("watch closed by the client"));
    if (feed_->store_watch) owner_.sim_.store().Unwatch(feed_->store_watch);
    std::lock_guard lock(owner_.mu_);
    if (owner_.watch_[k_] == feed_) owner_.watch_[k_].reset();
  }
  void Cancel() override { feed_->End(Status::IOError("watch cancelled")); }

 private:
  SteppedInformers& owner_;
  const int k_;
  std::shared_ptr<Feed> feed_;
};

inline size_t SteppedInformers::Pending(int k) const {
  std::lock_guard lock(mu_);
  return watch_[k] ? watch_[k]->Pending() : 0;
}

// A stream that has already ended: nothing to cancel.
inline std::unique_ptr<kube::Transport::Stream> SteppedInformersEnded() {
  struct Ended final : kube::Transport::Stream {
    void Cancel() override {}
  };
  return std::make_unique<Ended>();
}

inline std::unique_ptr<kube::Transport::Stream> SteppedInformers::OpenStream(
    const kube::HttpRequest& r, kube::Transport::StreamCallbacks cb) {
  const int k = KindOf(r.target);
  current_ = k;
  {
    std::lock_guard lock(mu_);
    if (aborted_) {
      cb.on_end(Status::IOError("the process died (crash injected)"), std::nullopt);
      return SteppedInformersEnded();
    }
  }
  // Refusals (faults, bad parameters, 410) come back at once; the informer
  // goes on to its next request or backoff, still holding the turn.
  auto dispatched = sim::Dispatch(sim_, {"GET", r.target, "", "", ""}, "sim");
  if (auto* reply = std::get_if<sim::ApiReply>(&dispatched)) {
    cb.on_end(Status::Ok(),
              kube::HttpResponse{reply->status, reply->body, reply->content_type, std::nullopt});
    return SteppedInformersEnded();
  }
  const sim::WatchCall& call = std::get<sim::WatchCall>(dispatched);
  auto parsed = sim::ParseWatchParams(call.target, call.route, sim_.options().watch_list);
  if (auto* refused = std::get_if<sim::ApiReply>(&parsed)) {
    cb.on_end(Status::Ok(), kube::HttpResponse{refused->status, refused->body,
                                               refused->content_type, std::nullopt});
    return SteppedInformersEnded();
  }
  auto feed = std::make_shared<Feed>();
  feed->callbacks = std::move(cb);
  feed->route = call.route;
  feed->params = std::get<sim::WatchParams>(parsed);
  std::weak_ptr<Feed> weak = feed;
  sim::Store::WatchStart start = sim_.store().Watch(
      *call.route.kind, call.route.ns, feed->params.from_rv, [weak](const sim::StoredEvent& e) {
        auto f = weak.lock();
        if (!f) return;
        std::string line = sim::EventLine(e, f->route, f->params.labels, f->params.fields);
        std::lock_guard lock(f->mu);
        if (!line.empty()) f->lines.emplace_back(std::move(line), e.rv);
      });
  if (start.failure) {
    // 410 Expired travels as one ERROR event; the informer relists at once.
    feed->callbacks.on_line(sim::ErrorLine(*start.failure));
    feed->End(Status::Ok());
    return SteppedInformersEnded();
  }
  feed->store_watch = start.id;
  {
    std::lock_guard lock(mu_);
    watch_[k] = feed;
  }
  auto stream = std::make_unique<Stream>(*this, k, feed);
  Yield(k, Waiting::kWatch);
  return stream;
}

inline bool SteppedInformers::Deliver(int k, size_t n,
                                      const std::function<std::string()>& rv_of_informer) {
  std::shared_ptr<Feed> feed;
  uint64_t parks;
  {
    std::lock_guard lock(mu_);
    if (aborted_ || state_[k] != Waiting::kWatch || !watch_[k]) return false;
    feed = watch_[k];
    parks = parks_[k];
  }
  std::vector<std::pair<std::string, int64_t>> batch;
  {
    std::lock_guard lock(feed->mu);
    while (batch.size() < n && !feed->lines.empty()) {
      batch.push_back(std::move(feed->lines.front()));
      feed->lines.pop_front();
    }
  }
  if (batch.empty()) return false;
  for (const auto& [line, rv] : batch) feed->callbacks.on_line(line);
  const std::string rv = std::to_string(batch.back().second);
  feed->callbacks.on_line(sim::BookmarkLine(feed->route, batch.back().second));
  // The informer applies the lines on its own thread: wait for the bookmark
  // (or for a new park, when a line ended the watch).
  for (;;) {
    {
      std::lock_guard lock(mu_);
      if (aborted_ || parks_[k] != parks) return true;
    }
    if (rv_of_informer() == rv) return true;
    std::this_thread::yield();
  }
}

inline bool SteppedInformers::EndWatch(int k, bool error, bool expired) {
  std::unique_lock lock(mu_);
  if (aborted_ || state_[k] != Waiting::kWatch || !watch_[k]) return false;
  std::shared_ptr<Feed> feed = watch_[k];
  const uint64_t parks = parks_[k];
  lock.unlock();
  if (expired) {
    sim::ApiFailure gone{410, "Expired", "too old resource version", "", feed->route.kind};
    feed->callbacks.on_line(sim::ErrorLine(gone));
  } else {
    feed->End(error ? Status::IOError("connection reset (injected)") : Status::Ok());
  }
  lock.lock();
  cv_.wait(lock, [&] { return parks_[k] != parks || aborted_; });
  return true;
}

}  // namespace fk::testing
