// The wall clock as an injectable seam: the journal stamps events with it,
// and tests substitute a ManualClock so timestamps are deterministic.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace fk {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::system_clock::time_point Now() const = 0;
};

class SystemClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::now();
  }
  static SystemClock& Instance();
};

// A clock that moves only when told to.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(std::chrono::system_clock::time_point start) : now_(start) {}
  std::chrono::system_clock::time_point Now() const override { return now_; }
  void Advance(std::chrono::milliseconds d) { now_ += d; }

 private:
  std::chrono::system_clock::time_point now_;
};

// RFC 3339 UTC with millisecond precision: "2026-11-29T17:14:31.123Z".
std::string FormatRfc3339(std::chrono::system_clock::time_point t);

// Kubernetes MicroTime (Lease and Event times): six fractional digits,
// "2026-11-29T17:14:31.123456Z".
std::string FormatMicroTime(std::chrono::system_clock::time_point t);

}  // namespace fk
