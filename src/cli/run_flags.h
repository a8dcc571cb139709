// `fencekeeper run`'s flags, as typed, turned into validated settings: every
// unusable value is refused at start-up with a message naming the flag and
// the value (docs/design.md#the-command-line-contract), before anything is
// opened or started. Pure apart from the injected host resolver, so the rules are tested
// table-driven.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "common/status.h"
#include "domain/enforcement.h"

namespace fk::cli {

struct ListenAddress {
  std::string host;  // a numeric address (resolved)
  uint16_t port = 0;
};

struct RunSettings {
  std::string journal;
  std::optional<std::string> kubeconfig;
  std::string context;
  std::vector<std::string> namespaces;  // DNS-1123 labels, no repeats; empty: all
  std::string selector;                 // parses as a Kubernetes label selector
  std::chrono::milliseconds resync{0};
  bool streaming_lists = true;
  std::optional<ListenAddress> http;  // port 0: one the system picks, logged
  // /metrics alone, so it can be restricted apart from the probes; unset:
  // /metrics is served on `http` as well.
  std::optional<ListenAddress> metrics;
  bool metrics_off = false;  // --metrics-addr 0: /metrics is not served at all
  bool leader_elect = false;
  std::optional<std::string> leader_election_namespace;
  std::string leader_election_id;  // the Lease's name (a DNS-1123 subdomain)
  std::chrono::milliseconds lease_duration{0}, renew_deadline{0}, retry_period{0};
  int boundary_port = 0;
  std::string log_format, log_level;
  double kube_api_qps = 0;
  int kube_api_burst = 0;
  int workers = 0;
  std::chrono::milliseconds journal_retention{0};  // 0: keep everything
  std::string journal_archive;                     // "": none
  domain::Enforcement enforcement;
};

// A host name or address to a numeric address; nullopt if it does not resolve.
using HostResolver = std::function<std::optional<std::string>(const std::string& host)>;
// The system resolver (getaddrinfo), for listening: "" is every address.
std::optional<std::string> ResolveListenHost(const std::string& host);

inline constexpr std::chrono::seconds kMinResync{1};
inline constexpr std::chrono::seconds kMinRetention{1};

Result<RunSettings> ParseRunFlags(const RunOptions& flags,
                                  const HostResolver& resolve = ResolveListenHost);

// A TCP port as typed: base-10 digits only, 1-65535 (no sign, no
// wrap-around); 0 too if `allow_zero` (listen on a port the system picks).
std::optional<uint16_t> ParsePort(const std::string& text, bool allow_zero = false);

}  // namespace fk::cli
