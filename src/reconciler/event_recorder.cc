#include "reconciler/event_recorder.h"

#include "common/log.h"
#include "common/utf8.h"
#include "kube/event_body.h"

#include <algorithm>
#include <cstdio>

namespace fk::reconciler {

std::string EventName(const std::string& sandbox, const std::string& suffix) {
  constexpr size_t kMaxName = 253;
  // A sandbox name is a DNS subdomain (ASCII); its cut must still end alphanumeric.
  std::string head = sandbox.substr(0, kMaxName - 1 - std::min(suffix.size(), kMaxName - 2));
  while (head.size() > 1 && (head.back() == '-' || head.back() == '.')) head.pop_back();
  return head + "." + suffix;
}

std::string EventJson(const FailClosedEvent& e, const std::string& instance, WallTime now,
                      uint64_t unique) {
  // Event names must be unique per namespace: the sandbox name plus a
  // time-and-sequence suffix, as client-go's recorder does (the time padded
  // to 16 digits, so that no two pairs give the same suffix).
  char suffix[40];
  std::snprintf(
      suffix, sizeof suffix, "%016llx%llx",
      static_cast<unsigned long long>(
          std::chrono::duration_cast<std::chrono::nanoseconds>(now.time_since_epoch()).count()),
      static_cast<unsigned long long>(unique));
  using Kind = FailClosedEvent::Kind;
  std::string note = e.reason + ": " + e.note + " (journal seq " + std::to_string(e.seq) + ")";
  // A hold also says how to get out of it, a dry run that nothing happened;
  // the cut below keeps the cause first.
  if (e.kind == Kind::kHeld) note += "; " + std::string(kResumeHint);
  if (e.kind == Kind::kWouldSuspend) note += "; " + std::string(kDryRunHint);
  if (note.size() > 1024) note = std::string(Utf8Prefix(note, 1021)) + "...";
  kube::EventSpec event;
  event.name = EventName(e.name, suffix);
  event.ns = e.ns;
  event.event_time = FormatMicroTime(now);
  event.type = e.kind == Kind::kHeld ? "Normal" : "Warning";
  event.reason = e.kind == Kind::kHeld           ? "FailClosedHeld"
                 : e.kind == Kind::kWouldSuspend ? "FailClosedDryRun"
                                                 : "FailClosedSuspended";
  event.action = e.kind == Kind::kHeld           ? "Hold"
                 : e.kind == Kind::kWouldSuspend ? "WouldSuspend"
                                                 : "Suspend";
  event.reporting_controller = "openshell.ai/fencekeeper";
  event.reporting_instance = instance;
  event.regarding = {kube::ApiVersionOf(kube::SandboxResource(e.api_version)), "Sandbox", e.ns,
                     e.name, e.uid};
  event.note = std::move(note);
  return kube::EventBody(event);
}

EventRecorder::EventRecorder(kube::ApiClient& client, std::string instance, TimeSource& time,
                             int senders, size_t capacity, Metrics* metrics, WriteFence write_fence)
    : client_(client),
      instance_(std::move(instance)),
      time_(time),
      capacity_(capacity),
      metrics_(metrics),
      write_fence_(std::move(write_fence)) {
  for (int i = 0; i < senders; ++i) threads_.emplace_back([this] { Run(); });
}

EventRecorder::~EventRecorder() { Stop(); }

void EventRecorder::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_) t.join();
  threads_.clear();
  DropQueued();
}

// What the senders did not get to (or could not send: the fence was down)
// goes with the term: counted, and said once.
void EventRecorder::DropQueued() {
  std::lock_guard lock(mu_);
  if (queue_.empty()) return;
  log::Info("Events dropped: not sent before the recorder stopped")
      .Int("count", static_cast<int64_t>(queue_.size()));
  for (size_t i = 0; i < queue_.size(); ++i) Count(&EventStats::dropped, "dropped");
  queue_.clear();
}

void EventRecorder::Publish(FailClosedEvent event) {
  std::lock_guard lock(mu_);
  if (stopping_ || queue_.size() >= capacity_) {
    Count(&EventStats::dropped, "dropped");
    log::Info("Event dropped: the Event queue is full")
        .Namespace(event.ns)
        .Sandbox(event.name)
        .Seq(event.seq);
    return;
  }
  queue_.push_back(std::move(event));
  cv_.notify_one();
}

void EventRecorder::Count(int EventStats::*field, const char* result) {
  ++(stats_.*field);
  if (metrics_) metrics_->Event(result);
}

EventStats EventRecorder::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::optional<MonoTime> EventRecorder::FenceUntil() const {
  if (!write_fence_) return MonoTime::max();
  return write_fence_();
}

void EventRecorder::SendQueued() {
  for (;;) {
    FailClosedEvent e;
    {
      std::lock_guard lock(mu_);
      if (queue_.empty()) return;
      e = std::move(queue_.front());
      queue_.pop_front();
    }
    if (Send(e) == Sent::kDone) continue;
    std::lock_guard lock(mu_);
    queue_.push_front(std::move(e));  // first again once the fence holds
    return;
  }
}

void EventRecorder::Run() {
  // While the fence is down, it is looked at again this often (on the real
  // clock, like WorkQueue::Get: the time source only measures).
  constexpr auto kFenceRecheck = std::chrono::milliseconds(200);
  for (;;) {
    FailClosedEvent e;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;  // what is still queued is dropped (and counted) by Stop
      e = std::move(queue_.front());
      queue_.pop_front();
    }
    if (Send(e) == Sent::kDone) continue;
    std::unique_lock lock(mu_);
    queue_.push_front(std::move(e));
    cv_.wait_for(lock, kFenceRecheck, [this] { return stopping_; });
  }
}

std::string EventRecorder::Body(const FailClosedEvent& e) {
  uint64_t unique;
  {
    std::lock_guard lock(mu_);
    unique = ++sequence_;
  }
  return EventJson(e, instance_, time_.Now(), unique);
}

kube::ApiResult EventRecorder::Post(const std::string& path, const std::string& body,
                                    MonoTime until) {
  kube::CallOptions call;
  if (until != MonoTime::max()) call.deadline = until;  // nothing leaves after the fence
  return client_.Send("POST", path, body, "application/json", call);
}

namespace {
// Created, or there already: the retry is the same POST, under a name unique
// to this recorder and this Event, so a 409 means that an attempt whose
// answer was lost created it.
bool Exists(const kube::ApiResult& r) {
  return r.ok() || kube::ApiErrorOf(r.status()).kind == kube::ApiErrorKind::kAlreadyExists;
}
}  // namespace

EventRecorder::Sent EventRecorder::Send(const FailClosedEvent& e) {
  const auto path = kube::ObjectPath(kube::EventResource(), e.ns, "");
  if (!path.ok()) {
    std::lock_guard lock(mu_);
    Count(&EventStats::failed, "failed");
    log::Error("not creating the Event")
        .Namespace(e.ns)
        .Sandbox(e.name)
        .Seq(e.seq)
        .Error(path.status().message());
    return Sent::kDone;
  }
  // Set by the first attempt: a send that finds the fence down returns first.
  kube::ApiResult r = Status::Cancelled("not sent");
  // Drawn once: a retry after a lost answer must not create a second Event
  // under a new name.
  std::string body;
  for (int attempt = 0; attempt < 2; ++attempt) {  // one attempt and at most one retry
    const std::optional<MonoTime> until = FenceUntil();
    if (!until && attempt == 0) {
      std::lock_guard lock(mu_);
      ++stats_.fenced;
      return Sent::kFenced;
    }
    if (!until) break;  // the retry found the fence down: the Event failed
    if (body.empty()) body = Body(e);
    r = Post(*path, body, *until);
    if (Exists(r)) break;
  }
  std::lock_guard lock(mu_);
  if (Exists(r)) {
    Count(&EventStats::created, "created");
  } else {
    Count(&EventStats::failed, "failed");
    log::Info("could not create the Event")
        .Namespace(e.ns)
        .Sandbox(e.name)
        .Seq(e.seq)
        .Error(r.status().message());
  }
  return Sent::kDone;
}

}  // namespace fk::reconciler
