// The two lines that keep a misconfiguration from passing in silence
// (docs/design.md#the-command-line-contract): at start the scope watched,
// once synced what the caches hold.
#pragma once

#include <string>
#include <vector>

#include "reconciler/cluster_cache.h"

namespace fk::reconciler {

// "namespaces a, b" or "all namespaces".
std::string ScopeText(const std::vector<std::string>& namespaces);
// "3 sandboxes, 2 policies, 4 pods in 2 namespaces (a: 2 sandboxes, 2
// policies, 3 pods; b: ...)": every watched namespace is listed, empty ones
// too, so a namespace that holds nothing is visible; at most 20 by name.
std::string CacheSummary(const ClusterCache& cache, const std::vector<std::string>& namespaces);

}  // namespace fk::reconciler
