// The subcommands as functions that write to streams and return the process
// exit code, so tests run them in-process. Exit codes: 0 success, 1 a check
// failed (replay --check found a divergence), 2 usage error or a journal that
// cannot be used, 3 replay's filters match no row (an unknown sandbox).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "domain/observation.h"

namespace fk::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitCheckFailed = 1;
inline constexpr int kExitUnusable = 2;
inline constexpr int kExitNoRows = 3;

struct MigrateOptions {
  std::string journal;
  bool check = false;  // report only; never create or change the file
};
int RunMigrate(const MigrateOptions& options, std::ostream& out, std::ostream& err);

// Copies a live journal consistently (SQLite online backup) and verifies the copy.
int RunBackup(const std::string& journal, const std::string& to, std::ostream& out,
              std::ostream& err);

// `journal verify` (docs/journal-chain.md): reads only; exit 0 verified, 1 a
// mismatch (naming the first bad seq and file), 2 unreadable input.
struct VerifyOptions {
  std::string journal;
  std::optional<std::string> expect_head;  // "SEQ:HASH" an auditor kept earlier
  std::optional<std::string> archive;      // the --journal-archive directory
};
int RunJournalVerify(const VerifyOptions& options, std::ostream& out, std::ostream& err);
// Several journals (a deployment's replicas), each with its own archive and
// head: each verified on its own, every line naming the journal it is about;
// the exit code is the worst of theirs. One journal: exactly as above.
int RunJournalVerify(const std::vector<VerifyOptions>& journals, std::ostream& out,
                     std::ostream& err);

// `status` (cli/status.h): every sandbox the journal holds, what it is now,
// since when, its episode's fence change and what resumes it; reads only.
struct StatusOptions {
  std::string journal;
  std::vector<std::string> namespaces;  // only these (repeatable); all when empty
  std::optional<std::string> status;    // --verdict: suspended, held, suspending, ...
  bool json = false;
};
int RunStatus(const StatusOptions& options, std::ostream& out, std::ostream& err);

struct ReplayOptions {
  // One journal, or several shown as one timeline in time order: the
  // journals of a deployment's replicas and archive files.
  std::vector<std::string> journals;
  std::vector<std::string> sandboxes;   // "namespace/name"; with namespaces: any of them
  std::vector<std::string> namespaces;  // whole namespaces
  // Bounds, inclusive: a seq ("42"), an RFC 3339 time ("2026-12-01T10:00:00Z"),
  // or a duration ("15m") meaning that long before the journal's last row
  // (the latest last row of the journals). A seq only with one journal.
  std::optional<std::string> since, until;
  bool check = false;
  bool quiet = false;  // with check: the verdict line (and divergences) only
  bool json = false;
  std::optional<std::string> html;  // write the swimlane page here instead of text
  bool force = false;               // --html may replace an existing file
};
int RunReplay(const ReplayOptions& options, std::ostream& out, std::ostream& err);

struct DemoOptions {
  std::optional<std::string> directory;  // where the journal goes; a new temp dir if unset
  int passes = 20;                       // resync passes before and after the restart
  // The second act (an "allow DNS" policy bypasses team-healthy's fence).
  // Off: the incident alone, for tests whose journal is the incident's.
  bool bypass_act = true;
};
int RunDemo(const DemoOptions& options, std::ostream& out, std::ostream& err);

// As typed; ParseRunFlags (run_flags.h) validates them.
struct RunOptions {
  std::string journal;
  std::optional<std::string> kubeconfig;
  std::string context;
  std::vector<std::string> namespaces;
  std::string selector = "openshell.ai/managed-by=openshell,openshell.ai/sandbox-id";
  std::string resync = "30s";
  // List by streaming lists (falling back to pages where the server does
  // not serve them): kube::InformerOptions::streaming_list.
  bool streaming_lists = true;
  std::optional<std::string> http_addr;
  std::optional<std::string> metrics_addr;  // unset: /metrics on http_addr; "0": not served
  // controller-runtime's spellings of the same flags (giving both is refused
  // unless they agree): --health-probe-bind-address, --metrics-bind-address,
  // --zap-log-level.
  std::optional<std::string> health_probe_bind_address, metrics_bind_address, zap_log_level;
  std::string leader_election_id = "fencekeeper";  // the Lease's name
  bool leader_elect = false;
  std::optional<std::string> leader_election_namespace;
  // controller-runtime's defaults; shorter values are for tests.
  std::string lease_duration = "15s";
  std::string renew_deadline = "10s";
  std::string retry_period = "2s";
  std::string boundary_port = std::to_string(domain::kDefaultBoundaryPort);
  std::string log_format = "text";
  std::optional<std::string> log_level;  // unset: info
  std::string kube_api_qps = "0";        // client-side rate limit: requests per second (0: off)...
  std::string kube_api_burst = "100";    // ...and at once (kube::ClientOptions' defaults)
  // Sandboxes reconciled at once; never two workers on one sandbox. Sized
  // for the API server's concurrency, not the machine's cores: a worker
  // mostly waits for an answer (docs/performance.md).
  std::string workers = "16";
  std::string journal_retention = "90d";  // 0: keep everything (docs/retention.md)
  std::optional<std::string> journal_archive;
  // docs/design.md#audit-before-enforce: "enforce" or "dry-run" (off
  // everywhere); --dry-run-namespace turns it off in the namespaces named.
  std::string enforcement = "enforce";
  std::vector<std::string> dry_run_namespaces;
};
// Runs until SIGINT or SIGTERM (exit 0); 2 for an unusable journal or config.
int RunRun(const RunOptions& options, std::ostream& err);

struct SimCommandOptions {
  std::string listen = "127.0.0.1:18080";
  std::optional<std::string> scenario;
  std::optional<std::string> write_kubeconfig;
  std::optional<std::string> latency;  // Go-style duration added to every answer
  std::optional<int> drop_watch_after_events;
  std::optional<std::string> tls_cert, tls_key;
  std::optional<std::string> token;
  std::vector<std::string> faults;  // VERB:RESOURCE:STATUS[:RETRY_AFTER_SECONDS[:COUNT]]
  std::optional<std::string> drop_watches_every;    // Go-style duration
  std::optional<std::string> expire_history_every;  // Go-style duration
  std::optional<std::string> watch_list;            // the WatchList gate: on, off or silent
};
// Serves until SIGINT or SIGTERM.
int RunSim(const SimCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace fk::cli
