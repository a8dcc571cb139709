// What a controller (reconciler/controller.h) is given to run: a reconciler
// of one kind of object, keyed by namespace and name — kube-runtime's
// `reconcile` function and controller-runtime's `Reconciler` interface. The
// controller owns the queue, the workers and the resync; the reconciler owns
// everything about the object (for fencekeeper: SandboxReconciler).
#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "common/namespaced_name.h"

namespace fk::reconciler {

// The object a work item is about: the one object key (common/namespaced_name.h).
using ObjectKey = NamespacedName;

// What the controller does with the key next.
struct ReconcileResult {
  enum class Next { kDone, kRetry, kAfter };
  Next next = Next::kDone;
  std::chrono::milliseconds after{0};  // for kAfter
  // For kRetry: the longest Retry-After an answer of the pass asked for; the
  // work queue waits that long if it exceeds the backoff (at most 60 s).
  std::optional<int64_t> retry_after_seconds;
  static ReconcileResult Done() { return {}; }
  static ReconcileResult Retry() { return {Next::kRetry, {}, std::nullopt}; }
  static ReconcileResult After(std::chrono::milliseconds d) {
    return {Next::kAfter, d, std::nullopt};
  }
};

// How each result is spelled, in one table indexed by Next: the word of the
// reconcile log line, and controller-runtime's result label on
// fencekeeper_reconcile_total (an error is retried with backoff;
// requeue_after comes back after a delay the reconciler chose).
struct NextSpelling {
  const char* log_word;
  const char* metric_label;
};
inline constexpr NextSpelling kNextSpellings[] = {
    {"done", "success"},         // kDone
    {"retry", "error"},          // kRetry
    {"after", "requeue_after"},  // kAfter
};
static_assert(std::size(kNextSpellings) == static_cast<size_t>(ReconcileResult::Next::kAfter) + 1);

inline const char* ToString(ReconcileResult::Next next) {
  return kNextSpellings[static_cast<size_t>(next)].log_word;
}
inline const char* MetricLabel(ReconcileResult::Next next) {
  return kNextSpellings[static_cast<size_t>(next)].metric_label;
}

class Reconciler {
 public:
  virtual ~Reconciler() = default;
  // One pass over `key`. Called from several workers at once, never for the
  // same key at once.
  virtual ReconcileResult Reconcile(const ObjectKey& key) = 0;
  // The keys to work as soon as the controller starts, before any change is
  // seen (for fencekeeper: what a crash left unsettled).
  virtual std::vector<ObjectKey> KeysAtStart() { return {}; }
  // The queue ran dry: a moment for upkeep that must hold up no key.
  virtual void Idle() {}
  // The controller is stopping: cut calls in flight short, so every worker
  // ends its step promptly.
  virtual void Cancel() {}
};

// Which keys a change of one cached object (ns, name) concerns: kube-runtime's
// `watches(api, config, mapper)`. The primary kind maps to itself; a pod or a
// policy maps to the sandboxes that depend on it.
using KeyMapper =
    std::function<std::vector<ObjectKey>(const std::string& ns, const std::string& name)>;

}  // namespace fk::reconciler
