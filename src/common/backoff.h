// Exponential backoff, the one formula every retry in fencekeeper uses:
// base * 2^attempt, capped at `max`, plus (optionally) up to the same again
// as random jitter, still capped at `max`. And the one cap on a server's
// Retry-After, applied wherever one is honoured (client retries, informer
// backoff, work-queue requeues).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

namespace fk {

// The longest Retry-After honoured (docs/design.md#retries-and-rate-limits):
// a server asking for more waits this long. An API server asks for seconds; a broken or hostile one
// must not switch the controller off for an hour.
inline constexpr std::chrono::seconds kMaxRetryAfter{60};

inline std::chrono::milliseconds RetryAfterDelay(int64_t seconds) {
  return std::chrono::seconds(std::clamp<int64_t>(seconds, 0, kMaxRetryAfter.count()));
}

inline std::chrono::milliseconds ExponentialDelay(std::chrono::milliseconds base, int attempt,
                                                  std::chrono::milliseconds max) {
  using std::chrono::milliseconds;
  const int64_t factor = int64_t{1} << std::clamp(attempt, 0, 30);
  if (base.count() > 0 && base.count() > max.count() / factor)
    return max;  // would pass the cap (or overflow)
  return std::min(max, milliseconds(base.count() * factor));
}

template <class Rng>
std::chrono::milliseconds JitteredDelay(std::chrono::milliseconds base, int attempt,
                                        std::chrono::milliseconds max, Rng& rng) {
  const auto d = ExponentialDelay(base, attempt, max);
  std::uniform_int_distribution<int64_t> jitter(0, std::max<int64_t>(1, d.count()) - 1);
  return std::min(max, d + std::chrono::milliseconds(jitter(rng)));
}

}  // namespace fk
