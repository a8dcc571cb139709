// The supervisor policy (openshell-sandbox-supervisors) of each fenced
// namespace, watched for people: it only allows supervisor egress, and
// OpenShell re-creates it when it is missing, so its absence or alteration
// suspends nobody (docs/design.md#the-supervisor-policy). It is journaled as
// a fence observation by the passes that see it; here it is warned once per
// change, listed by /readyz?verbose (never unready) and counted in
// fencekeeper_supervisor_policies{state}. An altered policy that widens what
// workloads may reach is caught by the effective fence, like any policy.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "common/compact_string.h"
#include "common/sorted_names.h"
#include "reconciler/cluster_cache.h"
#include "reconciler/readiness.h"

namespace fk::reconciler {

class SupervisorPolicyWatch {
 public:
  // Recomputes from the caches for every namespace that has a workload
  // fence; warns once for each change to missing or altered (a new uid or
  // generation of an altered policy is a change), and says when it is back.
  void Update(const ClusterCache& cache);
  // One line per namespace whose supervisor policy is missing or altered; all ok.
  std::vector<ReadinessCheck> Checks() const;
  // Namespaces per state: intact, missing, altered (every state present).
  std::map<std::string, int> Counts() const;

 private:
  // Packed, as it is kept for every fenced namespace: the state names a
  // literal, the uid is a CompactString, the namespaces a sorted array (a
  // map node and two strings would be about 190 bytes a namespace).
  struct Seen {
    std::string_view state;  // intact, missing, altered
    CompactString uid;
    int64_t generation = 0;
    bool operator==(const Seen&) const = default;
  };
  mutable std::mutex mu_;
  SortedNames<Seen> seen_;  // by namespace
};

}  // namespace fk::reconciler
