// What a watch sends, without HTTP: the query parameters it accepts and the
// newline-terminated JSON lines it streams (events, bookmarks, an ERROR).
// sim::Server writes these lines to its chunked responses; the deterministic
// simulation hands them to the real informers over a fake transport.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "common/clock.h"
#include "sim/handler.h"
#include "sim/selector.h"
#include "sim/store.h"

namespace fk::sim {

// What a watch request asks for, once its query parameters are valid.
struct WatchParams {
  Selector labels, fields;
  std::optional<int64_t> from_rv;
  bool bookmarks = false;
  int timeout_seconds = 1800;
  bool initial_events_end = false;  // a streaming list: the bookmark after the initial events
};

// The watch's parameters, or the reply that refuses them. A streaming list
// (sendInitialEvents=true with resourceVersionMatch=NotOlderThan) is served
// as `gate` says; its initial events are the current state, whatever
// resourceVersion it names (never older than that, as the server's
// consistent read).
std::variant<ApiReply, WatchParams> ParseWatchParams(const Target& t, const Route& r,
                                                     WatchListGate gate);

// The event line a watcher sees for a stored event, or "" if the event is
// invisible through its selectors. An object that moves out of the selection
// is seen as DELETED, one that moves in as ADDED, like the real API server.
// `table_at`: the watcher asked for Tables (kubectl get -w); each event then
// carries a one-row Table, with ages measured then.
std::string EventLine(const StoredEvent& e, const Route& r, const Selector& labels,
                      const Selector& fields, std::optional<WallTime> table_at = std::nullopt);

// An ERROR event carrying `failure` as a Status (e.g. 410 Expired).
std::string ErrorLine(const ApiFailure& failure);

std::string BookmarkLine(const Route& r, int64_t rv);
// The bookmark that ends a streaming list's initial events: annotated
// k8s.io/initial-events-end=true.
std::string InitialEventsEndLine(const Route& r, int64_t rv);

}  // namespace fk::sim
