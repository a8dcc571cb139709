#include "sim/watch_lines.h"

#include <boost/json.hpp>
#include <charconv>

#include "kube/json_fields.h"
#include "sim/simulator.h"
#include "sim/table.h"

namespace fk::sim {
namespace json = boost::json;

namespace {

bool MatchesSelectors(const json::value& obj, const Selector& labels, const Selector& fields) {
  return labels.Matches(obj) && fields.Matches(obj);
}

}  // namespace

std::string EventLine(const StoredEvent& e, const Route& r, const Selector& labels,
                      const Selector& fields, std::optional<WallTime> table_at) {
  std::string type = e.type;
  const bool now_in = MatchesSelectors(e.object, labels, fields);
  if (e.type == "MODIFIED") {
    const bool was_in = MatchesSelectors(e.previous, labels, fields);
    if (!now_in && !was_in) return {};
    if (!was_in) type = "ADDED";
    if (!now_in) type = "DELETED";
  } else if (!now_in) {
    return {};
  }
  json::value object = Simulator::ToVersion(*r.kind, e.object, r.version);
  if (table_at)
    object = Table(*r.kind, {object}, kube::MetadataString(object, "resourceVersion"), *table_at);
  json::object line{{"type", type}, {"object", std::move(object)}};
  return json::serialize(line) + "\n";
}

namespace {

ApiReply InvalidWatch(const std::string& why) {
  return FailureReply(422, "Invalid", "ListOptions.meta.k8s.io \"\" is invalid: " + why);
}

}  // namespace

std::variant<ApiReply, WatchParams> ParseWatchParams(const Target& t, const Route& r,
                                                     WatchListGate gate) {
  auto labels = Selector::ParseLabels(t.Query("labelSelector"));
  auto fields = Selector::ParseFields(t.Query("fieldSelector"), r.kind);
  if (!labels || !fields)
    return FailureReply(400, "BadRequest", "unable to parse the label or field selector");
  const std::string match = t.Query("resourceVersionMatch");
  if (t.Has("sendInitialEvents") && gate == WatchListGate::kOff) {
    // As a server with the WatchList feature gate off: client-go falls back to list+watch.
    return InvalidWatch(
        "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the "
        "WatchList feature gate is enabled");
  }
  // Provided at all (even "false"), it asks for NotOlderThan, as the API
  // server's validation reads the pointer; only a true value streams.
  const bool provided = t.Has("sendInitialEvents");
  const bool streaming = t.Flag("sendInitialEvents");
  if (provided && match != "NotOlderThan")
    return InvalidWatch(
        "resourceVersionMatch: Forbidden: sendInitialEvents requires setting "
        "resourceVersionMatch to NotOlderThan");
  if (!provided && !match.empty())
    return InvalidWatch(
        "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for "
        "watch unless sendInitialEvents is provided");
  WatchParams p{*labels, *fields, std::nullopt, t.Flag("allowWatchBookmarks"), 1800};
  if (const std::string rv = t.Query("resourceVersion"); !rv.empty()) {
    int64_t parsed = 0;
    auto [end, perr] = std::from_chars(rv.data(), rv.data() + rv.size(), parsed);
    if (perr != std::errc() || end != rv.data() + rv.size() || parsed < 0)
      return FailureReply(400, "BadRequest", "invalid resourceVersion '" + rv + "'");
    p.from_rv = parsed;
  }
  if (const std::string ts = t.Query("timeoutSeconds"); !ts.empty())
    p.timeout_seconds = std::max(1, std::atoi(ts.c_str()));
  if (streaming) {
    p.from_rv.reset();  // the current state, as ADDED events
    p.initial_events_end = gate == WatchListGate::kOn;
  }
  return p;
}

std::string ErrorLine(const ApiFailure& failure) {
  return json::serialize(
             json::object{{"type", "ERROR"}, {"object", json::parse(failure.ToJson())}}) +
         "\n";
}

namespace {

std::string Bookmark(const Route& r, int64_t rv, json::object annotations) {
  json::object metadata{{"resourceVersion", std::to_string(rv)}};
  if (!annotations.empty()) metadata["annotations"] = std::move(annotations);
  return json::serialize(json::object{{"type", "BOOKMARK"},
                                      {"object",
                                       {{"kind", r.kind->kind},
                                        {"apiVersion", r.kind->ApiVersion(r.version)},
                                        {"metadata", std::move(metadata)}}}}) +
         "\n";
}

}  // namespace

std::string InitialEventsEndLine(const Route& r, int64_t rv) {
  return Bookmark(r, rv, {{"k8s.io/initial-events-end", "true"}});
}

std::string BookmarkLine(const Route& r, int64_t rv) { return Bookmark(r, rv, {}); }

}  // namespace fk::sim
