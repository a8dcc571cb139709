// Concurrent workers, deterministically (the simulation's `--workers`): each
// virtual worker is a real thread running the controller's work items, but
// only one thread ever runs at a time. A worker runs until it parks — the
// fake transport calls Park() at every request, before the server sees it —
// or its work item ends; then control returns to the scheduler, which picks
// the next worker to run (from its seeded RNG). So two passes interleave at
// every request boundary, replayably, and the code under test is the real
// multi-threaded code: its locks, its journal group commit, its queue.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace fk::testing {

class SteppedWorkers {
 public:
  enum class Slice { kIdle, kFinished, kParked };  // no item was due / item done / at a request

  // `work_item` is one ProcessNextWorkItem(false); true if it did one.
  SteppedWorkers(int workers, std::function<bool()> work_item) : item_(std::move(work_item)) {
    state_.assign(workers, State::kIdle);
    did_.assign(workers, false);
    for (int w = 0; w < workers; ++w) threads_.emplace_back([this, w] { Loop(w); });
  }
  // A crash: parked workers fail their requests (Park() returns false) and
  // finish their items; then every thread ends.
  ~SteppedWorkers() {
    Abort();
    {
      std::lock_guard lock(mu_);
      shutdown_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  SteppedWorkers(const SteppedWorkers&) = delete;
  SteppedWorkers& operator=(const SteppedWorkers&) = delete;

  int size() const { return static_cast<int>(threads_.size()); }
  bool parked(int w) const {
    std::lock_guard lock(mu_);
    return state_[w] == State::kParked;
  }
  bool aborted() const {
    std::lock_guard lock(mu_);
    return aborted_;
  }

  // Worker `w` runs until it parks or its item ends: a parked worker resumes,
  // an idle one starts a work item. The caller (the scheduler) waits meanwhile.
  Slice Run(int w) {
    std::unique_lock lock(mu_);
    turn_ = w;
    cv_.notify_all();
    cv_.wait(lock, [this] { return turn_ == kScheduler; });
    if (state_[w] == State::kParked) return Slice::kParked;
    return did_[w] ? Slice::kFinished : Slice::kIdle;
  }

  // Runs workers until none is parked and none finds an item due; at most
  // `max_slices` slices. True if any item was worked on.
  bool Drain(int max_slices) {
    bool any = false;
    for (int n = 0, quiet = 0; n < max_slices && quiet < size(); ++n) {
      const Slice s = Run(n % size());
      any |= s != Slice::kIdle;
      quiet = s == Slice::kIdle ? quiet + 1 : 0;
    }
    return any;
  }

  // Called by the transport before each request: on a worker's thread, hands
  // control back to the scheduler until it runs this worker again; false
  // once its workers were aborted (the process died: the request never
  // leaves). Off the workers (the scheduler's own requests, e.g. the lease)
  // it returns true at once.
  static bool ParkIfWorker() { return pool_ ? pool_->Park(current_) : true; }

 private:
  enum class State { kIdle, kWorking, kParked };
  static constexpr int kScheduler = -1;

  bool Park(int w) {
    std::unique_lock lock(mu_);
    if (aborted_) return false;
    state_[w] = State::kParked;
    turn_ = kScheduler;
    cv_.notify_all();
    cv_.wait(lock, [this, w] { return turn_ == w; });
    state_[w] = State::kWorking;
    return !aborted_;
  }

  void Abort() {
    {
      std::lock_guard lock(mu_);
      aborted_ = true;
    }
    for (int w = 0; w < size(); ++w) {
      while (parked(w)) Run(w);
    }
  }

  void Loop(int w) {
    current_ = w;
    pool_ = this;
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [this, w] { return turn_ == w || shutdown_; });
      if (turn_ != w) return;  // shut down
      state_[w] = State::kWorking;
      lock.unlock();
      const bool did = aborted() ? false : item_();
      lock.lock();
      state_[w] = State::kIdle;
      did_[w] = did;
      turn_ = kScheduler;
      cv_.notify_all();
    }
  }

  inline static thread_local int current_ = -1;  // this thread's worker index
  inline static thread_local SteppedWorkers* pool_ = nullptr;
  const std::function<bool()> item_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int turn_ = kScheduler;
  std::vector<State> state_;
  std::vector<bool> did_;
  bool aborted_ = false, shutdown_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace fk::testing
