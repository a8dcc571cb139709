// Whether a run enforces, namespace by namespace (docs/design.md#audit-before-enforce):
// `run --enforcement dry-run` turns enforcement off everywhere,
// `--dry-run-namespace NS` in the namespaces named. The deployer's choice (a
// flag, not a label a namespace's users could set); recorded with each run's
// start in the journal and in every observation it makes.
#pragma once

#include <optional>
#include <set>
#include <string>

namespace fk::domain {

struct Enforcement {
  bool dry_run_everywhere = false;
  std::set<std::string> dry_run_namespaces;  // sorted: the journal and the logs list them so

  bool DryRunIn(const std::string& ns) const {
    return dry_run_everywhere || dry_run_namespaces.contains(ns);
  }
  bool AnyDryRun() const { return dry_run_everywhere || !dry_run_namespaces.empty(); }
  // "enforce" or "dry-run": the run-wide mode, as --enforcement spells it.
  const char* Mode() const { return dry_run_everywhere ? "dry-run" : "enforce"; }
  // "enforcing everywhere", "dry run everywhere" or "enforcing, dry run in a, b":
  // what replay and status print for a run's start.
  std::string Describe() const {
    if (dry_run_everywhere) return "dry run everywhere";
    if (dry_run_namespaces.empty()) return "enforcing everywhere";
    std::string out = "enforcing, dry run in ";
    for (const std::string& ns : dry_run_namespaces) out += (out.back() == ' ' ? "" : ", ") + ns;
    return out;
  }
  bool operator==(const Enforcement&) const = default;
};

// The mode as Mode() spells it (nullopt: neither "enforce" nor "dry-run").
inline std::optional<bool> ParseDryRunEverywhere(const std::string& mode) {
  if (mode == "enforce") return false;
  if (mode == "dry-run") return true;
  return std::nullopt;
}

}  // namespace fk::domain
