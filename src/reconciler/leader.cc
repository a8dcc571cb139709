#include "reconciler/leader.h"

#include <spdlog/spdlog.h>

#include <boost/json.hpp>

#include "kube/json_fields.h"

namespace fk::reconciler {
namespace json = boost::json;

LeaderElector::LeaderElector(kube::ApiClient& client, LeaderOptions options, journal::Journal* journal)
    : client_(client),
      options_(std::move(options)),
      journal_(journal),
      time_(options_.time ? *options_.time : RealTimeSource::Instance()) {}

void LeaderElector::Journal(const std::string& state) {
  spdlog::info("leader election: {} lease {}/{} as {}", state, options_.ns, options_.name, options_.identity);
  if (!journal_) return;
  domain::Event e;
  e.ns = options_.ns;
  e.name = options_.name;
  e.body = domain::Leadership{options_.identity, state};
  if (auto r = journal_->Append({e}); !r.ok()) spdlog::error("cannot journal leadership change: {}", r.status().ToString());
}

bool LeaderElector::TryAcquireOrRenew() {
  const std::string path = kube::ResourcePath("coordination.k8s.io", "v1", "leases", options_.ns, options_.name);
  const std::string now = FormatMicroTime(time_.Now());
  const int64_t duration_s = std::chrono::duration_cast<std::chrono::seconds>(options_.lease_duration).count();
  kube::ApiResponse got = client_.Get(path);
  if (got.error.kind == kube::ApiErrorKind::kNotFound) {
    json::object lease{{"apiVersion", "coordination.k8s.io/v1"},
                       {"kind", "Lease"},
                       {"metadata", {{"name", options_.name}, {"namespace", options_.ns}}},
                       {"spec",
                        {{"holderIdentity", options_.identity},
                         {"leaseDurationSeconds", duration_s},
                         {"acquireTime", now},
                         {"renewTime", now},
                         {"leaseTransitions", 0}}}};
    kube::ApiResponse created = client_.Send("POST", kube::ResourcePath("coordination.k8s.io", "v1", "leases", options_.ns),
                                             json::serialize(lease), "application/json");
    if (created.ok()) {
      observed_record_ = json::serialize(lease["spec"]);
      observed_at_ = time_.MonotonicNow();
    }
    return created.ok();
  }
  if (!got.ok()) return false;
  boost::system::error_code ec;
  json::value lease = json::parse(got.body, ec);
  if (ec || !lease.is_object()) return false;
  json::value& spec_v = lease.as_object()["spec"];
  if (!spec_v.is_object()) spec_v = json::object{};
  json::object& spec = spec_v.as_object();
  const std::string record = json::serialize(spec);
  if (record != observed_record_) {
    observed_record_ = record;
    observed_at_ = time_.MonotonicNow();  // our own clock, not renewTime
  }
  const std::string holder = kube::StringField(&spec, "holderIdentity").value_or("");
  int64_t held_for_s = duration_s;
  if (const json::value* d = spec.if_contains("leaseDurationSeconds"); d && d->is_int64()) held_for_s = d->as_int64();
  if (!holder.empty() && holder != options_.identity &&
      observed_at_ + std::chrono::seconds(held_for_s) > time_.MonotonicNow()) {
    return false;  // someone else holds a valid lease
  }
  int64_t transitions = 0;
  if (const json::value* t = spec.if_contains("leaseTransitions"); t && t->is_int64()) transitions = t->as_int64();
  if (holder != options_.identity) {
    spec["acquireTime"] = now;
    spec["leaseTransitions"] = transitions + 1;
  }
  spec["holderIdentity"] = options_.identity;
  spec["leaseDurationSeconds"] = duration_s;
  spec["renewTime"] = now;
  kube::ApiResponse updated = client_.Send("PUT", path, json::serialize(lease), "application/json");  // carries metadata.resourceVersion
  if (!updated.ok()) return false;
  observed_record_ = json::serialize(spec);
  observed_at_ = time_.MonotonicNow();
  return true;
}

void LeaderElector::Release() {
  const std::string path = kube::ResourcePath("coordination.k8s.io", "v1", "leases", options_.ns, options_.name);
  kube::ApiResponse got = client_.Get(path);
  if (!got.ok()) return;
  boost::system::error_code ec;
  json::value lease = json::parse(got.body, ec);
  if (ec || !lease.is_object()) return;
  json::value& spec = lease.as_object()["spec"];
  if (!spec.is_object() || kube::StringField(&spec.as_object(), "holderIdentity").value_or("") != options_.identity) return;
  const std::string now = FormatMicroTime(time_.Now());
  spec.as_object()["holderIdentity"] = "";
  spec.as_object()["leaseDurationSeconds"] = 1;
  spec.as_object()["renewTime"] = now;
  spec.as_object()["acquireTime"] = now;
  client_.Send("PUT", path, json::serialize(lease), "application/json");
}

void LeaderElector::Run(const std::function<void()>& on_started, const std::function<void()>& on_stopped,
                        const std::function<bool()>& should_stop,
                        const std::function<bool(std::chrono::milliseconds)>& wait) {
  while (!should_stop()) {
    // Acquire.
    while (!TryAcquireOrRenew()) {
      if (!wait(options_.retry_period)) return;
    }
    Journal("acquired");
    on_started();
    // Renew every retry period; give up when no renewal succeeds within the renew deadline.
    auto last_renew = time_.MonotonicNow();
    bool lost = false;
    while (wait(options_.retry_period)) {
      if (TryAcquireOrRenew()) {
        last_renew = time_.MonotonicNow();
      } else if (time_.MonotonicNow() - last_renew > options_.renew_deadline) {
        lost = true;
        break;
      }
    }
    on_stopped();
    if (lost) {
      Journal("lost");
      continue;
    }
    Release();
    Journal("released");
    return;
  }
}

}  // namespace fk::reconciler
