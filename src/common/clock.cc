#include "common/clock.h"

#include <algorithm>
#include <cstdio>
#include <ctime>

namespace fk {

void Interrupt::Fire() {
  {
    std::lock_guard lock(mu_);
    if (fired_) return;
    fired_ = true;
    cv_.notify_all();
  }
  std::lock_guard hooks(hooks_mu_);
  for (auto& [id, fn] : hooks_) fn();
  hooks_.clear();  // each runs once
}

Interrupt::Hook Interrupt::OnFire(std::function<void()> fn) {
  std::lock_guard hooks(hooks_mu_);
  if (fired()) {
    fn();
    return {};
  }
  const uint64_t id = next_hook_++;
  hooks_.emplace(id, std::move(fn));
  return Hook(this, id);
}

Interrupt::Hook::Hook(Hook&& other) noexcept : owner_(other.owner_), id_(other.id_) {
  other.owner_ = nullptr;
}

Interrupt::Hook& Interrupt::Hook::operator=(Hook&& other) noexcept {
  if (this != &other) {
    this->~Hook();
    owner_ = other.owner_;
    id_ = other.id_;
    other.owner_ = nullptr;
  }
  return *this;
}

Interrupt::Hook::~Hook() {
  if (!owner_) return;
  std::lock_guard hooks(owner_->hooks_mu_);
  owner_->hooks_.erase(id_);
  owner_ = nullptr;
}

bool Interrupt::fired() const {
  std::lock_guard lock(mu_);
  return fired_;
}

bool Interrupt::WaitFor(std::chrono::milliseconds d) {
  std::unique_lock lock(mu_);
  return !cv_.wait_for(lock, d, [this] { return fired_; });
}

RealTimeSource& RealTimeSource::Instance() {
  static RealTimeSource source;
  return source;
}

ManualTimeSource::ManualTimeSource(WallTime start) : start_(start) {}

WallTime ManualTimeSource::Now() const {
  std::lock_guard lock(mu_);
  return start_ + elapsed_;
}

MonoTime ManualTimeSource::MonotonicNow() const {
  std::lock_guard lock(mu_);
  return MonoTime(elapsed_);
}

bool ManualTimeSource::SleepFor(std::chrono::milliseconds d, Interrupt& interrupt) {
  if (interrupt.fired()) return false;
  std::lock_guard lock(mu_);
  sleeps_.push_back(d);
  elapsed_ += std::max(d, std::chrono::milliseconds(0));
  return true;
}

bool ManualTimeSource::WaitUntil(MonoTime deadline, Interrupt& interrupt) {
  // The hook is made and destroyed outside mu_: Fire holds the interrupt's
  // hook lock while the callback takes mu_, so the other order would deadlock.
  bool fired = false;
  const Interrupt::Hook wake = interrupt.OnFire([&] {
    std::lock_guard woken(mu_);
    fired = true;
    advanced_.notify_all();
  });
  std::unique_lock lock(mu_);
  advanced_.wait(lock, [&] { return fired || MonoTime(elapsed_) >= deadline; });
  return !fired;
}

void ManualTimeSource::Advance(std::chrono::milliseconds d) {
  std::lock_guard lock(mu_);
  elapsed_ += d;
  advanced_.notify_all();
}

std::vector<std::chrono::milliseconds> ManualTimeSource::sleeps() const {
  std::lock_guard lock(mu_);
  return sleeps_;
}

std::string FormatRfc3339(WallTime t) {
  using namespace std::chrono;
  const auto ms = duration_cast<milliseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(ms / 1000);
  long millis = static_cast<long>(ms % 1000);
  if (millis < 0) {  // times before the epoch round toward the past
    millis += 1000;
    secs -= 1;
  }
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, millis);
  return buf;
}

std::string FormatMicroTime(WallTime t) {
  using namespace std::chrono;
  int64_t us = duration_cast<microseconds>(t.time_since_epoch()).count() % 1000000;
  if (us < 0) us += 1000000;
  char frac[8];
  std::snprintf(frac, sizeof frac, "%06lld", static_cast<long long>(us));
  return FormatRfc3339(t).substr(0, 19) + "." + frac + "Z";
}

}  // namespace fk
