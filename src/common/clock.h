// Time as an injectable seam (after Envoy's TimeSource): the wall clock, the
// monotonic clock, and waits that can be interrupted. Every module that needs
// time takes a TimeSource; none reads a clock or sleeps by itself, so tests
// and the deterministic simulation run on ManualTimeSource, where time moves
// only when told to and a wait returns at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace fk {

using WallTime = std::chrono::system_clock::time_point;
using MonoTime = std::chrono::steady_clock::time_point;

// A one-way flag that cuts waits short: once fired it stays fired. Owners
// (a client, an informer, a controller) fire theirs on Stop.
class Interrupt {
 public:
  Interrupt() = default;
  Interrupt(const Interrupt&) = delete;
  Interrupt& operator=(const Interrupt&) = delete;

  void Fire();
  bool fired() const;
  // Blocks up to `d` on the real clock; true when the whole time passed.
  bool WaitFor(std::chrono::milliseconds d);

  // Registered by OnFire; unregisters when destroyed (waiting for the
  // callback if it is running), so the callback never outlives what it uses.
  class Hook {
   public:
    Hook() = default;
    Hook(Hook&& other) noexcept;
    Hook& operator=(Hook&& other) noexcept;
    ~Hook();

   private:
    friend class Interrupt;
    Hook(Interrupt* owner, uint64_t id) : owner_(owner), id_(id) {}
    Interrupt* owner_ = nullptr;
    uint64_t id_ = 0;
  };
  // Runs `fn` once when the interrupt fires — at once, on this thread, if it
  // already has — unless the hook is destroyed first. This is how a call that
  // blocks on something other than a wait (a network exchange) is cut short by
  // its owner's Stop. `fn` runs on the firing thread and must not destroy a
  // hook of this same interrupt.
  [[nodiscard]] Hook OnFire(std::function<void()> fn);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool fired_ = false;
  // Held while callbacks run, so that ~Hook waits for a running one.
  std::mutex hooks_mu_;
  std::map<uint64_t, std::function<void()>> hooks_;
  uint64_t next_hook_ = 1;
};

class TimeSource {
 public:
  virtual ~TimeSource() = default;
  virtual WallTime Now() const = 0;           // wall clock: timestamps, Lease and Event times
  virtual MonoTime MonotonicNow() const = 0;  // durations, deadlines, backoff
  // Waits `d`, or less if `interrupt` fires first; true when the whole time passed.
  virtual bool SleepFor(std::chrono::milliseconds d, Interrupt& interrupt) = 0;
  // A background loop's timer: waits until this clock reads `deadline` (or
  // `interrupt` fires); true when it got there. Never moves a manual clock,
  // so a loop on its own thread cannot race a test's clock forward.
  virtual bool WaitUntil(MonoTime deadline, Interrupt& interrupt) {
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - MonotonicNow());
    if (left.count() <= 0) return !interrupt.fired();
    return SleepFor(left, interrupt);
  }

  int64_t NowMs() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Now().time_since_epoch()).count();
  }
};

class RealTimeSource final : public TimeSource {
 public:
  WallTime Now() const override { return std::chrono::system_clock::now(); }
  MonoTime MonotonicNow() const override { return std::chrono::steady_clock::now(); }
  bool SleepFor(std::chrono::milliseconds d, Interrupt& interrupt) override {
    return interrupt.WaitFor(d);
  }
  static RealTimeSource& Instance();
};

// Time that moves only when told to. A SleepFor advances it by the requested
// duration and returns at once (unless interrupted), and is recorded, so a
// test can assert exactly which waits happened. Thread-safe.
class ManualTimeSource final : public TimeSource {
 public:
  explicit ManualTimeSource(WallTime start = WallTime(std::chrono::hours(24 * 365 * 56)));
  WallTime Now() const override;
  MonoTime MonotonicNow() const override;
  bool SleepFor(std::chrono::milliseconds d, Interrupt& interrupt) override;
  bool WaitUntil(MonoTime deadline, Interrupt& interrupt) override;

  void Advance(std::chrono::milliseconds d);
  std::vector<std::chrono::milliseconds> sleeps() const;

 private:
  mutable std::mutex mu_;
  std::condition_variable advanced_;  // wakes WaitUntil
  std::chrono::milliseconds elapsed_{0};
  WallTime start_;
  std::vector<std::chrono::milliseconds> sleeps_;
};

// RFC 3339 UTC with millisecond precision: "2026-11-29T17:14:31.123Z".
std::string FormatRfc3339(WallTime t);

// Kubernetes MicroTime (Lease and Event times): six fractional digits,
// "2026-11-29T17:14:31.123456Z".
std::string FormatMicroTime(WallTime t);

}  // namespace fk
