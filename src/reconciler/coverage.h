// Whether each watched namespace is one fencekeeper can protect
// (docs/operations.md#coverage): a namespace that does not exist (a typo in
// --namespace), one whose sandboxes have no fence policies (nothing to fail
// closed against), or one whose fence selects no sandbox (a wrong
// --selector) is a misconfiguration that must not pass in silence. Each is
// said once as a warning when it is first seen, listed by /readyz?verbose
// (never making the replica unready: the others may be fine) and counted in
// fencekeeper_watched_namespaces{state}.
#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/sorted_names.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/readiness.h"

namespace fk::reconciler {

enum class Coverage {
  kCovered,      // sandboxes and fence policies
  kEmpty,        // neither (the namespace exists, or nothing says it does not)
  kMissing,      // the namespace does not exist
  kUnfenced,     // sandboxes, but neither fence policy
  kNoSandboxes,  // fence policies, but no sandbox the selector selects
};

const char* ToString(Coverage c);
// Every state, in the order the gauge lists them.
const std::vector<Coverage>& AllCoverages();

// The state of one namespace from its cached counts; `exists` is asked only
// when it holds nothing at all (nullopt: could not tell).
Coverage Classify(size_t sandboxes, bool fenced, std::optional<bool> exists);

class CoverageWatch {
 public:
  // Whether namespace `ns` exists (a GET); nullopt when that cannot be told
  // (no permission, no answer). Asked only for an explicitly watched
  // namespace that holds nothing, and once per namespace: steady state sends
  // no request.
  using Exists = std::function<std::optional<bool>(const std::string& ns)>;

  // `watched` empty: all namespaces (those holding sandboxes or policies).
  CoverageWatch(std::vector<std::string> watched, Exists exists);

  // Recomputes from the caches; warns once for each namespace that enters a
  // state other than covered or empty.
  void Update(const ClusterCache& cache);
  // One line per namespace that is not covered, then a summary (none when
  // every namespace is fine); all ok.
  std::vector<ReadinessCheck> Checks() const;
  // Namespaces per state (every state present, zeros included).
  std::map<std::string, int> Counts() const;

 private:
  const std::vector<std::string> watched_;
  const Exists exists_;
  mutable std::mutex mu_;
  std::map<std::string, std::optional<bool>> existence_;  // asked already
  // By namespace, a sorted array: a map node would be about 80 bytes of each
  // of a cluster-wide install's namespaces.
  SortedNames<Coverage> states_;
  bool updated_ = false;
};

}  // namespace fk::reconciler
