// The watcher's state machine (kube-runtime's watcher.rs, made explicit):
// an informer is either listing (its cache must be replaced by a whole
// listing: at start, after a 410) or watching from the last resourceVersion.
// One pure function steps it on what the last request ended with, and says
// whether to back off first; the informer (informer.h) does the requests.
#pragma once

namespace fk::kube {

enum class WatcherPhase { kListing, kWatching };

// How the last step's request ended.
enum class WatcherEvent {
  kListed,        // a whole listing (pages, or a streaming list's bookmark) became the cache
  kListFailed,    // the listing failed: the cache may be old
  kWatchEnded,    // the watch ended cleanly (timeout, closed): resume from the resourceVersion
  kWatchExpired,  // 410 Gone: the resourceVersion is too old to resume from
  kWatchFailed,   // the watch failed or was refused
};

struct WatcherState {
  WatcherPhase phase = WatcherPhase::kListing;
  int attempt = 0;  // failures in a row: the backoff's exponent
  bool operator==(const WatcherState&) const = default;
};

struct WatcherStep {
  WatcherState next;
  bool back_off = false;  // wait (with `next.attempt - 1` as the exponent) before the next step
  bool operator==(const WatcherStep&) const = default;
};

inline WatcherStep Step(WatcherState s, WatcherEvent e) {
  switch (e) {
    case WatcherEvent::kListed:
      return {{WatcherPhase::kWatching, 0}, false};
    case WatcherEvent::kListFailed:
      return {{WatcherPhase::kListing, s.attempt + 1}, true};
    case WatcherEvent::kWatchEnded:
      return {{WatcherPhase::kWatching, 0}, false};
    case WatcherEvent::kWatchExpired:
      return {{WatcherPhase::kListing, s.attempt}, false};  // relist at once
    case WatcherEvent::kWatchFailed:
      break;
  }
  return {{s.phase, s.attempt + 1}, true};
}

}  // namespace fk::kube
