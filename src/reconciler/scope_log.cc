#include "reconciler/scope_log.h"

#include <array>
#include <map>

namespace fk::reconciler {
namespace {

constexpr size_t kMaxNamespacesNamed = 20;
using Counts = std::array<size_t, 3>;  // by CacheKind

std::string CountsText(const Counts& n) {
  return std::to_string(n[0]) + " sandboxes, " + std::to_string(n[1]) + " policies, " +
         std::to_string(n[2]) + " pods";
}

}  // namespace

std::string ScopeText(const std::vector<std::string>& namespaces) {
  if (namespaces.empty()) return "all namespaces";
  std::string text = namespaces.size() == 1 ? "namespace " : "namespaces ";
  for (size_t i = 0; i < namespaces.size(); ++i) text += (i ? ", " : "") + namespaces[i];
  return text;
}

std::string CacheSummary(const ClusterCache& cache, const std::vector<std::string>& namespaces) {
  std::map<std::string, Counts> by_ns;
  for (const std::string& ns : namespaces) by_ns[ns] = {};
  Counts total{};
  for (int kind = 0; kind < 3; ++kind) {
    for (const auto& [ns, n] : cache.CountByNamespace(static_cast<CacheKind>(kind))) {
      by_ns[ns][kind] += n;
      total[kind] += n;
    }
  }
  std::string text = CountsText(total) + " in " + std::to_string(by_ns.size()) + " namespace(s)";
  if (by_ns.empty()) return text;
  text += " (";
  size_t named = 0;
  for (const auto& [ns, counts] : by_ns) {
    if (named == kMaxNamespacesNamed) {
      text += "; and " + std::to_string(by_ns.size() - named) + " more";
      break;
    }
    text += (named++ ? "; " : "") + ns + ": " + CountsText(counts);
  }
  return text + ")";
}

}  // namespace fk::reconciler
