// kube/watcher_state.h: the watcher's transitions, without a server. Each
// request's end moves the phase and the failure count as client-go's
// reflector and kube-runtime's watcher do.
#include <gtest/gtest.h>

#include "kube/watcher_state.h"

namespace fk::kube {
namespace {

constexpr auto kListing = WatcherPhase::kListing;
constexpr auto kWatching = WatcherPhase::kWatching;

TEST(WatcherState, ListingBacksOffUntilAListingLandsThenWatches) {
  WatcherState s;  // a new informer lists first
  EXPECT_EQ(s, (WatcherState{kListing, 0}));
  WatcherStep step = Step(s, WatcherEvent::kListFailed);
  EXPECT_EQ(step, (WatcherStep{{kListing, 1}, true}));
  step = Step(step.next, WatcherEvent::kListFailed);
  EXPECT_EQ(step, (WatcherStep{{kListing, 2}, true}));  // the backoff grows
  step = Step(step.next, WatcherEvent::kListed);
  EXPECT_EQ(step, (WatcherStep{{kWatching, 0}, false}));  // and resets
}

TEST(WatcherState, AWatchResumesRelistsOn410AndBacksOffOnFailure) {
  const WatcherState watching{kWatching, 0};
  EXPECT_EQ(Step(watching, WatcherEvent::kWatchEnded), (WatcherStep{{kWatching, 0}, false}));
  WatcherStep failed = Step(watching, WatcherEvent::kWatchFailed);
  EXPECT_EQ(failed, (WatcherStep{{kWatching, 1}, true}));
  failed = Step(failed.next, WatcherEvent::kWatchFailed);
  EXPECT_EQ(failed, (WatcherStep{{kWatching, 2}, true}));
  // A clean end after failures resumes with no backoff owed.
  EXPECT_EQ(Step(failed.next, WatcherEvent::kWatchEnded), (WatcherStep{{kWatching, 0}, false}));
  // 410: relist at once, the failure count kept for the listing's backoff.
  EXPECT_EQ(Step(failed.next, WatcherEvent::kWatchExpired), (WatcherStep{{kListing, 2}, false}));
}

}  // namespace
}  // namespace fk::kube
