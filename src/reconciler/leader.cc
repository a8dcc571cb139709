#include "reconciler/leader.h"

#include "common/log.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "common/random_id.h"
#include "kube/lease.h"
#include "reconciler/metrics.h"

namespace fk::reconciler {

namespace {

constexpr MonoTime::rep kNoFence = std::numeric_limits<MonoTime::rep>::min();

// The Lease as first created: held by us from `now`, no transitions yet.
}  // namespace

std::string LeaderIdentity(const std::string& hostname) {
  auto b = RandomBytes();
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // variant 10xx (RFC 4122)
  char uuid[37];
  std::snprintf(uuid, sizeof uuid,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                b[15]);
  return hostname + "_" + uuid;
}

const char* ToString(LeaderExit e) {
  switch (e) {
    case LeaderExit::kStopped:
      return "stopped";
    case LeaderExit::kLost:
      return "lost";
    case LeaderExit::kStartFailed:
      return "start-failed";
  }
  return "?";
}

LeaderElector::LeaderElector(kube::ApiClient& client, LeaderOptions options,
                             journal::Journal* journal)
    : client_(client),
      options_(std::move(options)),
      journal_(journal),
      time_(options_.time ? *options_.time : RealTimeSource::Instance()),
      fence_until_(kNoFence) {
  MasterStatus(false);
}

void LeaderElector::MasterStatus(bool leading) {
  if (options_.metrics) options_.metrics->LeaderElection(options_.name, leading);
}

MonoTime::duration LeaderElector::FenceRemaining() const {
  const MonoTime::rep until = fence_until_.load();
  if (until == kNoFence) return MonoTime::duration::zero();
  return MonoTime(MonoTime::duration(until)) - time_.MonotonicNow();
}

bool LeaderElector::MayWrite() const { return WriteFenceUntil().has_value(); }

std::optional<MonoTime> LeaderElector::WriteFenceUntil() const {
  const MonoTime::rep until = fence_until_.load();
  if (until == kNoFence) return std::nullopt;
  const MonoTime t{MonoTime::duration(until)};
  if (t <= time_.MonotonicNow()) return std::nullopt;
  return t;
}

void LeaderElector::Journal(const std::string& state) {
  log::Info("leader election")
      .Str("state", state)
      .Namespace(options_.ns)
      .Str("lease", options_.name)
      .Str("identity", options_.identity);
  if (!journal_) return;
  domain::Event e;
  e.ns = options_.ns;
  e.name = options_.name;
  e.body = domain::Leadership{options_.identity, state};
  if (auto r = journal_->Append({e}); !r.ok())
    log::Error("cannot journal a leadership change").Str("state", state).Error(r.status());
}

void LeaderElector::Observe(std::string record) {
  observed_record_ = std::move(record);
  observed_at_ = time_.MonotonicNow();  // our own clock, not renewTime
}

void LeaderElector::Confirm(MonoTime started) {
  fence_until_.store((started + options_.renew_deadline).time_since_epoch().count());
}

bool LeaderElector::CreateLease(const kube::CallOptions& call, MonoTime started,
                                const std::string& now, int64_t duration_s) {
  const kube::Lease lease =
      kube::Lease::New(options_.ns, options_.name, options_.identity, now, duration_s);
  const kube::ApiResult created =
      client_.Send("POST", kube::ResourcePath(kube::LeaseResource(), options_.ns), lease.Body(),
                   "application/json", call);
  if (!created.ok()) return false;
  Observe(lease.SpecRecord());
  Confirm(started);
  return true;
}

bool LeaderElector::TryAcquireOrRenew() {
  const MonoTime started = time_.MonotonicNow();
  // Renewing: what remains of the renew deadline; acquiring: one retry period.
  const auto fence = FenceRemaining();
  const kube::CallOptions call{
      started +
          (fence > MonoTime::duration::zero() ? fence : MonoTime::duration(options_.retry_period)),
      options_.cancel};
  const std::string path = kube::ResourcePath(kube::LeaseResource(), options_.ns, options_.name);
  const std::string now = FormatMicroTime(time_.Now());
  const int64_t duration_s =
      std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count();
  const kube::ApiResult got = client_.Get(path, call);
  if (kube::ApiErrorOf(got.status()).kind == kube::ApiErrorKind::kNotFound)
    return CreateLease(call, started, now, duration_s);
  if (!got.ok()) return false;
  auto lease = kube::Lease::Parse(got->body);
  if (!lease.ok()) return false;
  if (std::string record = lease->SpecRecord(); record != observed_record_)
    Observe(std::move(record));
  const std::string holder = lease->holder();
  if (!holder.empty() && holder != options_.identity) {
    fence_until_.store(kNoFence);  // someone else holds it now: whatever we held is gone
    const auto held_for = std::chrono::seconds(lease->duration_seconds(duration_s));
    if (observed_at_ + held_for > time_.MonotonicNow()) return false;  // and validly
  }
  lease->Claim(options_.identity, now, duration_s);
  // Carries metadata.resourceVersion: of two candidates, one wins.
  const kube::ApiResult updated =
      client_.Send("PUT", path, lease->Body(), "application/json", call);
  if (!updated.ok()) return false;
  Observe(lease->SpecRecord());
  Confirm(started);
  return true;
}

void LeaderElector::Release() {
  fence_until_.store(kNoFence);  // no writes from here on, whatever the API server says
  const kube::CallOptions call{time_.MonotonicNow() + options_.retry_period, nullptr};
  const std::string path = kube::ResourcePath(kube::LeaseResource(), options_.ns, options_.name);
  const kube::ApiResult got = client_.Get(path, call);
  if (!got.ok()) return;
  auto lease = kube::Lease::Parse(got->body);
  if (!lease.ok() || lease->holder() != options_.identity) return;
  lease->Release(FormatMicroTime(time_.Now()));
  // Best effort: a release that fails only makes the next leader wait out
  // the lease duration, so the answer is not looked at.
  (void)client_.Send("PUT", path, lease->Body(), "application/json", call);
}

LeaderExit LeaderElector::StopLeading(const std::function<void()>& on_stopped, LeaderExit why) {
  MasterStatus(false);
  if (why == LeaderExit::kLost) fence_until_.store(kNoFence);
  on_stopped();
  if (why == LeaderExit::kLost) {
    Journal("lost");
    return why;
  }
  Release();
  Journal("released");
  return why;
}

LeaderExit LeaderElector::Run(const std::function<Status()>& on_started,
                              const std::function<void()>& on_stopped,
                              const std::function<bool()>& should_stop,
                              const std::function<bool(std::chrono::milliseconds)>& wait) {
  for (;;) {
    if (should_stop()) return LeaderExit::kStopped;
    if (TryAcquireOrRenew()) break;
    if (!wait(options_.retry_period)) return LeaderExit::kStopped;
  }
  Journal("acquired");
  MasterStatus(true);
  if (Status s = on_started(); !s.ok()) {
    log::Error("leader election: could not start leading").Error(s);
    return StopLeading(on_stopped, LeaderExit::kStartFailed);
  }
  // Renew every retry period, and wake when the fence would lapse: no
  // renewal then succeeded within the renew deadline, and leadership is lost.
  for (;;) {
    const auto remaining = FenceRemaining();
    if (remaining <= MonoTime::duration::zero()) return StopLeading(on_stopped, LeaderExit::kLost);
    if (should_stop()) return StopLeading(on_stopped, LeaderExit::kStopped);
    if (!wait(std::min(options_.retry_period,
                       std::chrono::ceil<std::chrono::milliseconds>(remaining)))) {
      return StopLeading(on_stopped, LeaderExit::kStopped);
    }
    if (MayWrite()) TryAcquireOrRenew();
  }
}

}  // namespace fk::reconciler
