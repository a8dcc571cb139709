#include "sim/store.h"

#include <boost/json.hpp>
#include <cstdio>
#include <random>

#include "kube/api_status.h"
#include "kube/json.h"
#include "kube/json_fields.h"
#include "sim/defaults.h"

namespace fk::sim {
namespace json = boost::json;

namespace {

json::object& Meta(json::value& obj) {
  if (!obj.is_object()) obj = json::object{};
  json::value& m = obj.get_object()["metadata"];
  if (!m.is_object()) m = json::object{};
  return m.get_object();
}

// Everything but metadata (and status, where status has its own endpoint):
// what a change of bumps metadata.generation.
json::object GenerationRelevant(const json::value& obj, bool skip_status) {
  json::object out;
  if (!obj.is_object()) return out;
  for (const auto& [k, v] : obj.get_object()) {
    if (k == "metadata" || (skip_status && k == "status")) continue;
    out[k] = v;
  }
  return out;
}

std::string SecondsTimestamp(const TimeSource& clock) {
  std::string t = FormatRfc3339(clock.Now());  // 2026-11-29T17:14:31.123Z
  return t.substr(0, 19) + "Z";
}

ApiFailure Failure(int code, std::string reason, std::string message,
                   const ResourceKind* kind = nullptr, std::string name = {}) {
  return ApiFailure{code, std::move(reason), std::move(message), std::move(name), kind};
}

// What an edit stores: through /status only the status changes, otherwise
// everything but the status (when it is a subresource) and the fields the
// server owns; the generation moves when the spec does.
json::value NextVersion(const ResourceKind& kind, const json::value& current, json::value edited,
                        bool status_only) {
  if (status_only) {
    json::value next = current;
    if (const json::value* status = edited.get_object().if_contains("status"))
      next.get_object()["status"] = *status;
    else
      next.get_object().erase("status");
    return next;
  }
  json::value next = std::move(edited);
  if (kind.status_subresource) {
    if (const json::value* status = current.get_object().if_contains("status"))
      next.get_object()["status"] = *status;
    else
      next.get_object().erase("status");
  }
  json::object& meta = Meta(next);
  const json::object& old_meta = current.get_object().at("metadata").get_object();
  for (const char* f :
       {"uid", "creationTimestamp", "generation", "deletionTimestamp", "name", "namespace"}) {
    if (const json::value* v = old_meta.if_contains(f))
      meta[f] = *v;
    else
      meta.erase(f);
  }
  next.get_object()["apiVersion"] = current.get_object().at("apiVersion");
  next.get_object()["kind"] = current.get_object().at("kind");
  if (!kube::JsonEqual(GenerationRelevant(next, kind.status_subresource),
                       GenerationRelevant(current, kind.status_subresource))) {
    const json::value& g = old_meta.at("generation");
    // Meta() again: setting apiVersion/kind above may have moved the metadata.
    Meta(next)["generation"] = (g.is_int64() ? g.get_int64() : 0) + 1;
  }
  return next;
}

}  // namespace

std::string ApiFailure::ToJson() const {
  return kube::EncodeStatus(code, reason, message, name, kind ? kind->plural : "",
                            kind ? kind->group : "");
}

bool Store::Key::operator<(const Key& o) const {
  if (kind != o.kind) return kind < o.kind;
  if (ns != o.ns) return ns < o.ns;
  return name < o.name;
}

Store::Store(const TimeSource& clock, size_t history_limit, uint32_t uid_seed)
    : clock_(clock),
      history_limit_(history_limit),
      uid_prefix_(uid_seed ? uid_seed : std::random_device{}()) {}

// Unique by the counter in the last group; the first group is a hash of it,
// so UIDs differ from their first characters on, as random v4 UIDs from a
// real API server do (replay shows the first 8).
std::string Store::NewUid() {
  const uint64_t n = ++uid_counter_;
  uint32_t head = uid_prefix_ ^ static_cast<uint32_t>(n * 0x9E3779B97F4A7C15ULL >> 32);
  head ^= head >> 16;
  head *= 0x85EBCA6BU;
  head ^= head >> 13;
  char buf[48];
  std::snprintf(buf, sizeof buf, "%08x-5e3d-4000-8000-%012llx", head,
                static_cast<unsigned long long>(n));
  return buf;
}

ApiFailure Store::NotFound(const ResourceKind& kind, const std::string& name) const {
  return Failure(404, "NotFound", kind.GroupResource() + " \"" + name + "\" not found", &kind,
                 name);
}

void Store::Publish(const StoredEvent& e) {
  history_.push_back(e);
  if (history_.size() > history_limit_) {
    const size_t drop = history_.size() - history_limit_;
    compacted_rv_ = history_[drop - 1].rv;
    history_.erase(history_.begin(), history_.begin() + static_cast<std::ptrdiff_t>(drop));
  }
  for (auto& [id, w] : watchers_) {
    if (w.kind != e.kind) continue;
    if (!w.ns.empty() && kube::MetadataString(e.object, "namespace") != w.ns) continue;
    w.sink(e);
  }
}

Outcome Store::Commit(std::unique_lock<std::mutex>& lock, const ResourceKind& kind, const Key& key,
                      json::value next, const json::value* previous, const char* type) {
  StoredEvent e;
  e.rv = ++rv_;
  e.type = type;
  e.kind = &kind;
  Meta(next)["resourceVersion"] = std::to_string(e.rv);
  e.object = next;
  if (previous) e.previous = *previous;
  if (e.type == "DELETED") {
    objects_.erase(key);
  } else {
    objects_[key] = next;
  }
  Publish(e);
  auto hooks = hooks_;
  lock.unlock();
  for (auto& h : hooks) h(e);
  Outcome out;
  out.object = std::move(next);
  out.changed = true;
  return out;
}

Outcome Store::Create(const ResourceKind& view, const std::string& ns, json::value object) {
  const ResourceKind& kind = StorageKind(view);
  if (!object.is_object())
    return {Failure(400, "BadRequest", "the body must be a JSON object"), {}};
  json::object& meta = Meta(object);
  std::string name = kube::MetadataString(object, "name");
  const std::string body_ns = kube::MetadataString(object, "namespace");
  std::unique_lock lock(mu_);
  if (name.empty()) {
    const std::string generate = kube::MetadataString(object, "generateName");
    if (generate.empty()) {
      return {Failure(422, "Invalid",
                      kind.kind + " \"\" is invalid: metadata.name: Required value: name or "
                                  "generateName is required",
                      &kind),
              {}};
    }
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%05llx",
                  static_cast<unsigned long long>(uid_counter_ + 1) & 0xfffff);
    name = generate + suffix;
    meta["name"] = name;
  }
  if (kind.namespaced) {
    if (!body_ns.empty() && body_ns != ns) {
      return {Failure(400, "BadRequest",
                      "the namespace of the provided object does not match the namespace sent on "
                      "the request",
                      &kind, name),
              {}};
    }
    meta["namespace"] = ns;
  } else {
    meta.erase("namespace");
  }
  const Key key{&kind, kind.namespaced ? ns : "", name};
  if (objects_.contains(key)) {
    return {Failure(409, "AlreadyExists", kind.GroupResource() + " \"" + name + "\" already exists",
                    &kind, name),
            {}};
  }
  meta["uid"] = NewUid();
  meta["creationTimestamp"] = SecondsTimestamp(clock_);
  meta["generation"] = 1;
  meta.erase("deletionTimestamp");
  if (kind.status_subresource && kind.custom) object.get_object().erase("status");
  auto& o = object.get_object();
  if (!o.contains("apiVersion")) o["apiVersion"] = kind.ApiVersion(kind.versions[0]);
  if (!o.contains("kind")) o["kind"] = kind.kind;
  o["apiVersion"] = kind.ApiVersion(kind.versions[0]);
  ApplyDefaults(kind, object);
  return Commit(lock, kind, key, std::move(object), nullptr, "ADDED");
}

Outcome Store::Get(const ResourceKind& view, const std::string& ns, const std::string& name) const {
  const ResourceKind& kind = StorageKind(view);
  std::lock_guard lock(mu_);
  auto it = objects_.find({&kind, kind.namespaced ? ns : "", name});
  if (it == objects_.end()) return {NotFound(kind, name), {}};
  return {std::nullopt, it->second, false};
}

ListOutcome Store::List(const ResourceKind& view, const std::string& ns, const Selector& labels,
                        const Selector& fields) const {
  const ResourceKind& kind = StorageKind(view);
  std::lock_guard lock(mu_);
  ListOutcome out;
  out.resource_version = rv_;
  for (const auto& [key, obj] : objects_) {
    if (key.kind != &kind || (!ns.empty() && key.ns != ns)) continue;
    if (!labels.Matches(obj) || !fields.Matches(obj)) continue;
    out.items.push_back(obj);
  }
  return out;
}

Outcome Store::Update(const ResourceKind& view, const std::string& ns, const std::string& name,
                      json::value object, bool status_only) {
  const ResourceKind& kind = StorageKind(view);
  if (!object.is_object())
    return {Failure(400, "BadRequest", "the body must be a JSON object"), {}};
  const std::string body_name = kube::MetadataString(object, "name");
  if (!body_name.empty() && body_name != name) {
    return {Failure(400, "BadRequest",
                    "the name of the object (" + body_name +
                        ") does not match the name on the URL (" + name + ")",
                    &kind, name),
            {}};
  }
  const std::string rv = kube::MetadataString(object, "resourceVersion");
  if (rv.empty() && kind.custom) {
    return {Failure(422, "Invalid",
                    kind.kind + " \"" + name +
                        "\" is invalid: metadata.resourceVersion: Invalid value: 0: must be "
                        "specified for an update",
                    &kind, name),
            {}};
  }
  return Mutate(
      kind, ns, name,
      [&](json::value& current) -> std::optional<ApiFailure> {
        Meta(object)["resourceVersion"] = rv;  // checked by Mutate against the stored one
        current = std::move(object);
        return std::nullopt;
      },
      status_only);
}

Outcome Store::Mutate(const ResourceKind& view, const std::string& ns, const std::string& name,
                      const Transform& transform, bool status_only) {
  const ResourceKind& kind = StorageKind(view);
  std::unique_lock lock(mu_);
  const Key key{&kind, kind.namespaced ? ns : "", name};
  auto it = objects_.find(key);
  if (it == objects_.end()) return {NotFound(kind, name), {}};
  const json::value& current = it->second;
  json::value edited = current;
  if (auto failure = transform(edited)) return {std::move(failure), {}};
  if (!edited.is_object())
    return {Failure(400, "BadRequest", "the result is not a JSON object", &kind, name), {}};
  // Before the comparison below: a write that only drops what the server
  // fills in again changes nothing, so it bumps no generation and sends no event.
  if (!status_only) ApplyDefaults(kind, edited);

  const std::string wanted_rv = kube::MetadataString(edited, "resourceVersion");
  const std::string current_rv = kube::MetadataString(current, "resourceVersion");
  if (!wanted_rv.empty() && wanted_rv != current_rv) {
    return {Failure(409, "Conflict",
                    "Operation cannot be fulfilled on " + kind.GroupResource() + " \"" + name +
                        "\": the object has been modified; please apply your changes to the latest "
                        "version and try again",
                    &kind, name),
            {}};
  }

  json::value next = NextVersion(kind, current, std::move(edited), status_only);
  Meta(next)["resourceVersion"] = current_rv;
  if (kube::JsonEqual(next, current))
    return {std::nullopt, current, false};  // no-op: no new RV, no event
  const json::value previous = current;
  return Commit(lock, kind, key, std::move(next), &previous, "MODIFIED");
}

Outcome Store::Delete(const ResourceKind& view, const std::string& ns, const std::string& name,
                      const std::optional<std::string>& precondition_rv,
                      const std::optional<std::string>& precondition_uid) {
  const ResourceKind& kind = StorageKind(view);
  std::unique_lock lock(mu_);
  const Key key{&kind, kind.namespaced ? ns : "", name};
  auto it = objects_.find(key);
  if (it == objects_.end()) return {NotFound(kind, name), {}};
  if ((precondition_rv &&
       *precondition_rv != kube::MetadataString(it->second, "resourceVersion")) ||
      (precondition_uid && *precondition_uid != kube::MetadataString(it->second, "uid"))) {
    return {Failure(409, "Conflict",
                    "Operation cannot be fulfilled on " + kind.GroupResource() + " \"" + name +
                        "\": the precondition does not match",
                    &kind, name),
            {}};
  }
  json::value last = it->second;
  const json::value previous = last;
  return Commit(lock, kind, key, std::move(last), &previous, "DELETED");
}

Store::WatchStart Store::Watch(const ResourceKind& view, const std::string& ns,
                               std::optional<int64_t> from_rv, Sink sink,
                               const std::function<void(int64_t)>& after_initial) {
  const ResourceKind& kind = StorageKind(view);
  std::lock_guard lock(mu_);
  WatchStart start;
  if (from_rv && *from_rv > 0) {
    if (*from_rv < compacted_rv_) {
      start.failure = Failure(410, "Expired",
                              "too old resource version: " + std::to_string(*from_rv) + " (" +
                                  std::to_string(compacted_rv_) + ")");
      return start;
    }
    for (const StoredEvent& e : history_) {
      if (e.rv <= *from_rv || e.kind != &kind) continue;
      if (!ns.empty() && kube::MetadataString(e.object, "namespace") != ns) continue;
      sink(e);
    }
  } else {
    for (const auto& [key, obj] : objects_) {
      if (key.kind != &kind || (!ns.empty() && key.ns != ns)) continue;
      StoredEvent e;
      e.type = "ADDED";
      e.kind = &kind;
      e.object = obj;
      e.rv = std::stoll(kube::MetadataString(obj, "resourceVersion"));
      sink(e);
    }
    if (after_initial) after_initial(rv_);  // under the lock: before any later event
  }
  start.id = next_watch_++;
  watchers_[start.id] = Watcher{&kind, ns, std::move(sink)};
  return start;
}

void Store::Unwatch(uint64_t id) {
  std::lock_guard lock(mu_);
  watchers_.erase(id);
}

void Store::AddHook(std::function<void(const StoredEvent&)> hook) {
  std::lock_guard lock(mu_);
  hooks_.push_back(std::move(hook));
}

int64_t Store::CurrentResourceVersion() const {
  std::lock_guard lock(mu_);
  return rv_;
}

int64_t Store::CompactedResourceVersion() const {
  std::lock_guard lock(mu_);
  return compacted_rv_;
}

void Store::ExpireHistory() {
  std::lock_guard lock(mu_);
  history_.clear();
  compacted_rv_ = rv_;
}

size_t Store::WatchCount() const {
  std::lock_guard lock(mu_);
  return watchers_.size();
}

}  // namespace fk::sim
