#include "cli/run_flags.h"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

#include "common/duration.h"
#include "domain/dns_names.h"
#include "domain/label_selector.h"

namespace fk::cli {
namespace {

std::string Quoted(const std::string& v) { return "'" + v + "'"; }

Status Refuse(const std::string& flag, const std::string& value, const std::string& why) {
  return Status::InvalidArgument(flag + " " + Quoted(value) + ": " + why);
}

Status CheckNamespace(const std::string& flag, const std::string& ns) {
  if (domain::IsDns1123Label(ns)) return Status::Ok();
  std::string why =
      "not a namespace name (a DNS-1123 label: 1-63 lower-case letters, digits or '-', "
      "alphanumeric at both ends)";
  if (ns.find(',') != std::string::npos) why += "; to watch several namespaces, repeat " + flag;
  return Refuse(flag, ns, why);
}

Status ParseNamespaces(const RunOptions& f, RunSettings& s) {
  std::set<std::string> seen;
  for (const std::string& ns : f.namespaces) {
    if (Status st = CheckNamespace("--namespace", ns); !st.ok()) return st;
    if (!seen.insert(ns).second) return Refuse("--namespace", ns, "given more than once");
  }
  s.namespaces = f.namespaces;
  if (f.leader_election_namespace) {
    if (Status st = CheckNamespace("--leader-election-namespace", *f.leader_election_namespace);
        !st.ok())
      return st;
  }
  s.leader_election_namespace = f.leader_election_namespace;
  return Status::Ok();
}

Status ParseEnforcement(const RunOptions& f, RunSettings& s) {
  if (f.enforcement != "enforce" && f.enforcement != "dry-run")
    return Refuse("--enforcement", f.enforcement, "expected enforce or dry-run");
  s.enforcement.dry_run_everywhere = f.enforcement == "dry-run";
  for (const std::string& ns : f.dry_run_namespaces) {
    if (Status st = CheckNamespace("--dry-run-namespace", ns); !st.ok()) return st;
    if (!s.enforcement.dry_run_namespaces.insert(ns).second)
      return Refuse("--dry-run-namespace", ns, "given more than once");
  }
  if (s.enforcement.dry_run_everywhere && !f.dry_run_namespaces.empty())
    return Refuse("--dry-run-namespace", f.dry_run_namespaces.front(),
                  "--enforcement dry-run already turns enforcement off in every namespace");
  // A namespace that is not watched would never be decided: a typo to refuse.
  for (const std::string& ns : f.dry_run_namespaces) {
    if (!f.namespaces.empty() &&
        std::find(f.namespaces.begin(), f.namespaces.end(), ns) == f.namespaces.end())
      return Refuse("--dry-run-namespace", ns, "not one of the namespaces --namespace watches");
  }
  return Status::Ok();
}

Result<std::chrono::milliseconds> Duration(const std::string& flag, const std::string& text,
                                           std::chrono::milliseconds min) {
  auto d = ParseDuration(text);
  if (!d) return Refuse(flag, text, "not a duration (like 500ms, 30s, 5m, 1h30m)");
  if (*d < min) {
    return Refuse(
        flag, text,
        "must be at least " + std::to_string(min.count()) + "ms" +
            (min.count() % 1000 == 0 ? " (" + std::to_string(min.count() / 1000) + "s)" : ""));
  }
  return *d;
}

Status ParseDurations(const RunOptions& f, RunSettings& s) {
  auto resync = Duration("--resync", f.resync, kMinResync);
  if (!resync.ok()) return resync.status();
  auto lease = Duration("--lease-duration", f.lease_duration, std::chrono::seconds(1));
  if (!lease.ok()) return lease.status();
  auto renew = Duration("--renew-deadline", f.renew_deadline, std::chrono::milliseconds(1));
  if (!renew.ok()) return renew.status();
  auto retry = Duration("--retry-period", f.retry_period, std::chrono::milliseconds(1));
  if (!retry.ok()) return retry.status();
  // client-go's rules: a lease outlives a renewal attempt, which outlives retries.
  if (!(*lease > *renew))
    return Refuse("--renew-deadline", f.renew_deadline,
                  "must be shorter than --lease-duration " + Quoted(f.lease_duration));
  if (!(*renew > *retry * 12 / 10))
    return Refuse("--retry-period", f.retry_period,
                  "must be shorter than --renew-deadline " + Quoted(f.renew_deadline) + " / 1.2");
  s.resync = *resync;
  auto retention = f.journal_retention == "0"
                       ? Result<std::chrono::milliseconds>(std::chrono::milliseconds(0))
                       : Duration("--journal-retention", f.journal_retention, kMinRetention);
  if (!retention.ok()) return retention.status();
  s.journal_retention = *retention;
  s.lease_duration = *lease;
  s.renew_deadline = *renew;
  s.retry_period = *retry;
  return Status::Ok();
}

// HOST:PORT, [IPV6]:PORT or :PORT (every address).
Result<ListenAddress> ParseListenAddr(const std::string& flag, const std::string& text,
                                      const HostResolver& resolve) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return Refuse(flag, text, "expected HOST:PORT");
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  // Port 0 asks the system for a free port, which is logged (tests use it).
  const auto port = ParsePort(text.substr(colon + 1), /*allow_zero=*/true);
  if (!port) return Refuse(flag, text, "the port must be a number from 1 to 65535");
  const auto address = host.empty() ? std::optional<std::string>("0.0.0.0") : resolve(host);
  if (!address) return Refuse(flag, text, "host " + Quoted(host) + " does not resolve");
  return ListenAddress{*address, *port};
}

// One setting under two names (ours and controller-runtime's): either may
// be given, both only if they say the same.
Result<std::optional<std::string>> OneOf(
    const std::string& ours, const std::optional<std::string>& our_value, const std::string& theirs,
    const std::optional<std::string>& their_value,
    const std::function<bool(const std::string&, const std::string&)>& same) {
  if (our_value && their_value && !same(*our_value, *their_value))
    return Refuse(theirs, *their_value,
                  "disagrees with " + ours + " " + Quoted(*our_value) +
                      " (the same setting under controller-runtime's name; give one)");
  return our_value ? our_value : their_value;
}

// Listen addresses agree when they parse to the same host and port.
std::function<bool(const std::string&, const std::string&)> SameAddress(
    const HostResolver& resolve) {
  return [&resolve](const std::string& a, const std::string& b) {
    if (a == b) return true;
    auto pa = ParseListenAddr("", a, resolve);
    auto pb = ParseListenAddr("", b, resolve);
    return pa.ok() && pb.ok() && pa->host == pb->host && pa->port == pb->port;
  };
}

Status ParseListenAddrs(const RunOptions& f, const HostResolver& resolve, RunSettings& s) {
  auto http_text = OneOf("--http-addr", f.http_addr, "--health-probe-bind-address",
                         f.health_probe_bind_address, SameAddress(resolve));
  if (!http_text.ok()) return http_text.status();
  auto metrics_text = OneOf("--metrics-addr", f.metrics_addr, "--metrics-bind-address",
                            f.metrics_bind_address, SameAddress(resolve));
  if (!metrics_text.ok()) return metrics_text.status();
  const std::string http_flag = f.http_addr ? "--http-addr" : "--health-probe-bind-address";
  const std::string metrics_flag = f.metrics_addr ? "--metrics-addr" : "--metrics-bind-address";
  // controller-runtime's "0": not served.
  if (*http_text && **http_text != "0") {
    auto http = ParseListenAddr(http_flag, **http_text, resolve);
    if (!http.ok()) return http.status();
    s.http = *http;
  }
  s.metrics_off = *metrics_text && **metrics_text == "0";
  if (*metrics_text && !s.metrics_off) {
    auto metrics = ParseListenAddr(metrics_flag, **metrics_text, resolve);
    if (!metrics.ok()) return metrics.status();
    if (s.http && s.http->port != 0 && s.http->port == metrics->port &&
        (s.http->host == metrics->host || s.http->host == "0.0.0.0" || metrics->host == "0.0.0.0"))
      return Refuse(metrics_flag, **metrics_text,
                    "the same port as " + http_flag + " " + Quoted(**http_text));
    s.metrics = *metrics;
  }
  return Status::Ok();
}

// More workers than this only queue behind the API server's own limits and
// the journal's one writer.
constexpr int kMaxWorkers = 256;

Status ParseNumbers(const RunOptions& f, RunSettings& s) {
  const auto boundary = ParsePort(f.boundary_port);
  if (!boundary)
    return Refuse("--boundary-port", f.boundary_port, "must be a number from 1 to 65535");
  s.boundary_port = *boundary;
  double qps = 0;
  const char* qend = f.kube_api_qps.data() + f.kube_api_qps.size();
  auto [qp, qec] = std::from_chars(f.kube_api_qps.data(), qend, qps);
  if (qec != std::errc() || qp != qend || !std::isfinite(qps) || qps < 0)
    return Refuse("--kube-api-qps", f.kube_api_qps, "must be a number of at least 0 (0: no limit)");
  int burst = 0;
  const char* bend = f.kube_api_burst.data() + f.kube_api_burst.size();
  auto [bp, bec] = std::from_chars(f.kube_api_burst.data(), bend, burst);
  if (bec != std::errc() || bp != bend || burst < 1)
    return Refuse("--kube-api-burst", f.kube_api_burst, "must be a whole number of at least 1");
  s.kube_api_qps = qps;
  s.kube_api_burst = burst;
  int workers = 0;
  const char* wend = f.workers.data() + f.workers.size();
  auto [wp, wec] = std::from_chars(f.workers.data(), wend, workers);
  if (wec != std::errc() || wp != wend || workers < 1 || workers > kMaxWorkers)
    return Refuse("--workers", f.workers,
                  "must be a whole number from 1 to " + std::to_string(kMaxWorkers));
  s.workers = workers;
  return Status::Ok();
}

// zap's level names as controller-runtime's --zap-log-level takes them, in
// ours: debug, info, error, or N >= 1 (zap level -N: 1 is debug, more is
// more verbose, which is our trace). "panic" and the rest have no match.
std::optional<std::string> FromZapLevel(const std::string& zap) {
  if (zap == "debug" || zap == "info" || zap == "error") return zap;
  int n = 0;
  const char* end = zap.data() + zap.size();
  auto [p, ec] = std::from_chars(zap.data(), end, n);
  if (zap.empty() || ec != std::errc() || p != end || n < 1) return std::nullopt;
  return n == 1 ? "debug" : "trace";
}

Status ParseLogging(const RunOptions& f, RunSettings& s) {
  static const std::vector<std::string> kLevels{"trace", "debug", "info", "warn", "error"};
  if (f.log_level && std::find(kLevels.begin(), kLevels.end(), *f.log_level) == kLevels.end())
    return Refuse("--log-level", *f.log_level, "must be trace, debug, info, warn or error");
  std::optional<std::string> zap;
  if (f.zap_log_level) {
    zap = FromZapLevel(*f.zap_log_level);
    if (!zap)
      return Refuse("--zap-log-level", *f.zap_log_level,
                    "must be debug, info, error or a whole number of at least 1 (zap's levels "
                    "that fencekeeper has)");
    if (f.log_level && *f.log_level != *zap)
      return Refuse("--zap-log-level", *f.zap_log_level,
                    "disagrees with --log-level " + Quoted(*f.log_level) +
                        " (the same setting under controller-runtime's name; give one)");
  }
  if (f.log_format != "text" && f.log_format != "json")
    return Refuse("--log-format", f.log_format, "must be text or json");
  s.log_level = f.log_level.value_or(zap.value_or("info"));
  s.log_format = f.log_format;
  return Status::Ok();
}

}  // namespace

std::optional<uint16_t> ParsePort(const std::string& text, bool allow_zero) {
  if (text.empty() || text.size() > 5 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const int port = std::stoi(text);
  if (port < (allow_zero ? 0 : 1) || port > 65535) return std::nullopt;
  return static_cast<uint16_t>(port);
}

std::optional<std::string> ResolveListenHost(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.empty() ? nullptr : host.c_str(), "0", &hints, &found) != 0 || !found)
    return std::nullopt;
  char buf[NI_MAXHOST] = {};
  const int rc =
      getnameinfo(found->ai_addr, found->ai_addrlen, buf, sizeof buf, nullptr, 0, NI_NUMERICHOST);
  freeaddrinfo(found);
  if (rc != 0) return std::nullopt;
  return std::string(buf);
}

Result<RunSettings> ParseRunFlags(const RunOptions& f, const HostResolver& resolve) {
  RunSettings s;
  s.journal = f.journal;
  s.kubeconfig = f.kubeconfig;
  s.context = f.context;
  s.leader_elect = f.leader_elect;
  if (!domain::IsDns1123Subdomain(f.leader_election_id))
    return Refuse("--leader-election-id", f.leader_election_id,
                  "not a Lease name (a DNS-1123 subdomain: lower-case letters, digits, '-' and "
                  "'.', at most 253)");
  s.leader_election_id = f.leader_election_id;
  if (f.journal.empty()) return Refuse("--journal", f.journal, "a journal file is required");
  if (Status st = ParseLogging(f, s); !st.ok()) return st;
  if (Status st = ParseNamespaces(f, s); !st.ok()) return st;
  if (Status st = ParseEnforcement(f, s); !st.ok()) return st;
  if (auto sel = domain::ParseLabelSelector(f.selector); !sel.ok())
    return Refuse("--selector", f.selector, sel.status().message());
  s.selector = f.selector;
  s.streaming_lists = f.streaming_lists;
  if (Status st = ParseDurations(f, s); !st.ok()) return st;
  if (Status st = ParseNumbers(f, s); !st.ok()) return st;
  if (Status st = ParseListenAddrs(f, resolve, s); !st.ok()) return st;
  if (f.journal_archive) {
    if (f.journal_archive->empty())
      return Refuse("--journal-archive", *f.journal_archive, "an archive directory is required");
    if (s.journal_retention.count() == 0)
      return Refuse(
          "--journal-archive", *f.journal_archive,
          "archives what retention prunes, but --journal-retention is 0 (keep everything)");
    s.journal_archive = *f.journal_archive;
  }
  return s;
}

}  // namespace fk::cli
