#include "cli/command_flags.h"

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>

namespace fk::cli {

namespace {

// An option whose absence matters (std::optional stays unset unless typed).
template <typename T>
CLI::Option* AddOptional(CLI::App* cmd, const std::string& name, std::optional<T>& target,
                         const std::string& help) {
  return cmd->add_option_function<T>(
      name, [&target](const T& value) { target = value; }, help);
}

// Leader election and client-side API limits: the flags a run shares with
// controller-runtime's manager.
void AddRunClusterFlags(CLI::App* rn, RunOptions& run) {
  rn->add_flag("--leader-elect", run.leader_elect,
               "Take part in leader election (the Lease named by --leader-election-id)");
  rn->add_option("--leader-election-id", run.leader_election_id,
                 "Name of the leader election Lease (controller-runtime's flag)")
      ->capture_default_str()
      ->type_name("NAME");
  AddOptional(rn, "--leader-election-namespace", run.leader_election_namespace,
              "Namespace of the Lease (default: the config's)")
      ->type_name("NS");
  rn->add_option("--lease-duration", run.lease_duration, "Leader election lease duration")
      ->capture_default_str()
      ->type_name("DURATION");
  rn->add_option("--renew-deadline", run.renew_deadline, "Leader election renew deadline")
      ->capture_default_str()
      ->type_name("DURATION");
  rn->add_option("--retry-period", run.retry_period, "Leader election retry period")
      ->capture_default_str()
      ->type_name("DURATION");
  rn->add_option("--kube-api-qps", run.kube_api_qps,
                 "Client-side limit: sustained API requests per second (0: none; the API server's "
                 "429s are honoured either way)")
      ->capture_default_str()
      ->type_name("N");
  rn->add_option("--kube-api-burst", run.kube_api_burst, "API requests allowed at once")
      ->capture_default_str()
      ->type_name("N");
}

// Where the run serves probes and metrics, and how it logs.
void AddRunServingFlags(CLI::App* rn, RunOptions& run) {
  AddOptional(rn, "--http-addr", run.http_addr,
              "Serve /healthz and /readyz (and /metrics unless --metrics-addr is given) here, "
              "e.g. :8080 (default: off, nothing served; 0: off)")
      ->type_name("HOST:PORT");
  AddOptional(rn, "--health-probe-bind-address", run.health_probe_bind_address,
              "controller-runtime's name for --http-addr")
      ->type_name("HOST:PORT");
  AddOptional(rn, "--metrics-addr", run.metrics_addr,
              "Serve /metrics alone here (e.g. :8081), to restrict it apart from the probes "
              "(default: with the probes on --http-addr; 0: /metrics not served)")
      ->type_name("HOST:PORT");
  AddOptional(rn, "--metrics-bind-address", run.metrics_bind_address,
              "controller-runtime's name for --metrics-addr")
      ->type_name("HOST:PORT");
  rn->add_option("--log-format", run.log_format, "Log lines as text or json")
      ->capture_default_str()
      ->type_name("text|json");
  AddOptional(rn, "--log-level", run.log_level, "trace, debug, info (default), warn, error")
      ->type_name("LEVEL");
  AddOptional(rn, "--zap-log-level", run.zap_log_level,
              "controller-runtime's name for --log-level: debug, info, error, or a number of at "
              "least 1 (1: debug, 2 and more: trace)")
      ->type_name("LEVEL");
}

}  // namespace

CLI::App* AddMigrateCommand(CLI::App& app, MigrateOptions& options) {
  auto* m = app.add_subcommand("migrate", "Create or upgrade a journal (--check: report only)");
  m->add_option("--journal", options.journal, "Journal file")->required();
  m->add_flag("--check", options.check,
              "Report the schema version and pending migrations; change nothing");
  return m;
}

CLI::App* AddJournalCommand(CLI::App& app, std::vector<VerifyOptions>& verify) {
  auto* j = app.add_subcommand("journal", "Inspect a journal");
  j->require_subcommand(1);
  auto* v = j->add_subcommand(
      "verify",
      "Check integrity, the hash chain and the projections, reading only; prints 'head SEQ:HASH'");
  // Each flag may repeat; its function runs for each occurrence, in the order
  // typed, so that an --archive lands with the --journal it follows.
  const auto repeatable = [v](const char* flag, const std::function<void(const std::string&)>& f,
                              const char* help) {
    return v->add_option_function<std::string>(flag, f, help)
        ->trigger_on_parse()
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  };
  repeatable(
      "--journal",
      [&verify](const std::string& path) {
        if (verify.empty() || !verify.back().journal.empty()) verify.emplace_back();
        verify.back().journal = path;
      },
      "Journal file; repeat it to verify the journals of several replicas")
      ->required();
  const auto once = [&verify](const char* flag, std::optional<std::string> VerifyOptions::*field) {
    return [&verify, flag, field](const std::string& value) {
      if (verify.empty()) verify.emplace_back();  // given before any --journal: the first's
      VerifyOptions& o = verify.back();
      if (o.*field)
        throw CLI::ValidationError(
            flag, "given twice for " + (o.journal.empty() ? "the first --journal" : o.journal) +
                      "; each belongs to the --journal before it");
      o.*field = value;
    };
  };
  repeatable("--archive", once("--archive", &VerifyOptions::archive),
             "Archive directory (run --journal-archive) of the --journal before it: check its "
             "files and that they join");
  repeatable("--expect-head", once("--expect-head", &VerifyOptions::expect_head),
             "SEQ:HASH kept earlier: the --journal before it (or its archive) must still hold "
             "that hash there");
  return j;
}

CLI::App* AddBackupCommand(CLI::App& app, BackupOptions& options) {
  auto* b = app.add_subcommand(
      "backup", "Copy a live journal consistently (SQLite online backup) and verify the copy");
  b->add_option("--journal", options.journal, "Journal file")->required();
  b->add_option("--to", options.to,
                "Backup file to create (must not exist); - writes it to standard output")
      ->required();
  return b;
}

CLI::App* AddRunCommand(CLI::App& app, RunOptions& options) {
  auto* rn =
      app.add_subcommand("run", "Reconcile sandboxes against the namespace fences until stopped");
  rn->add_option("--journal", options.journal, "Journal file (created if missing)")
      ->required()
      ->type_name("PATH");
  AddOptional(rn, "--kubeconfig", options.kubeconfig,
              "Kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
      ->type_name("PATH");
  rn->add_option("--context", options.context, "Kubeconfig context")->type_name("NAME");
  rn->add_option("--namespace", options.namespaces, "Namespace to watch (repeatable; default: all)")
      ->type_name("NS");
  rn->add_option("--selector", options.selector, "Sandbox label selector")
      ->capture_default_str()
      ->type_name("SELECTOR");
  rn->add_option("--resync", options.resync, "Re-evaluate every cached sandbox this often")
      ->capture_default_str()
      ->type_name("DURATION");
  rn->add_option("--streaming-lists", options.streaming_lists,
                 "List by streaming lists (watch with sendInitialEvents), falling back to pages "
                 "where the API server does not serve them")
      ->default_str(options.streaming_lists ? "true" : "false")
      ->type_name("true|false");
  rn->add_option("--boundary-port", options.boundary_port, "TCP port of the intended fence")
      ->capture_default_str()
      ->type_name("PORT");
  rn->add_option("--workers", options.workers,
                 "Sandboxes reconciled concurrently (never two workers on one sandbox)")
      ->capture_default_str()
      ->type_name("N");
  rn->add_option("--journal-retention", options.journal_retention,
                 "Prune journal events older than this (like 90d, 12h; 0 keeps everything)")
      ->capture_default_str()
      ->type_name("DURATION");
  AddOptional(rn, "--journal-archive", options.journal_archive,
              "Write pruned events to sealed SQLite files in this directory first")
      ->type_name("DIR");
  rn->add_option("--enforcement", options.enforcement,
                 "dry-run: suspend nothing, record and warn what would be suspended")
      ->capture_default_str()
      ->type_name("enforce|dry-run");
  rn->add_option("--dry-run-namespace", options.dry_run_namespaces,
                 "Enforcement off in this namespace only (repeatable)")
      ->type_name("NS");
  AddRunServingFlags(rn, options);
  AddRunClusterFlags(rn, options);
  return rn;
}

CLI::App* AddStatusCommand(CLI::App& app, StatusOptions& options) {
  auto* s = app.add_subcommand(
      "status",
      "Every sandbox the journal holds: suspended, held, suspending, would-suspend (dry-run), "
      "admitting or healthy, why, "
      "since when, the fence change its episode began with, and what resumes it (reads only)");
  s->add_option("--journal", options.journal, "Journal file (a live one too)")
      ->required()
      ->type_name("PATH");
  s->add_option("--namespace", options.namespaces, "Only this namespace (repeatable)")
      ->type_name("NS");
  AddOptional(s, "--verdict", options.status,
              "Only sandboxes in this status: suspended, held, suspending, refused, would-suspend, "
              "admitting, healthy, ignored, observed")
      ->type_name("STATUS");
  s->add_option_function<std::string>(
       "--format", [&options](const std::string& v) { options.json = v == "json"; },
       "text (aligned columns) or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->type_name("text|json");
  return s;
}

CLI::App* AddDemoCommand(CLI::App& app, DemoOptions& options) {
  auto* d =
      app.add_subcommand("demo", "Run the upstream incident end to end and print what happened");
  AddOptional(d, "--dir", options.directory,
              "Directory for the demo journal (default: a new temp dir)");
  return d;
}

CLI::App* AddSimCommand(CLI::App& app, SimCommandOptions& options) {
  auto* s = app.add_subcommand("sim", "Serve the simulated Kubernetes API until stopped");
  s->add_option("--listen", options.listen, "HOST:PORT to listen on")->capture_default_str();
  AddOptional(s, "--scenario", options.scenario,
              "Scenario file (YAML), or a built-in name: incident-3525");
  AddOptional(s, "--write-kubeconfig", options.write_kubeconfig,
              "Write a kubeconfig for this server (trusting --tls-cert, sending --token)");
  AddOptional(s, "--latency", options.latency, "Delay every answer (e.g. 50ms)");
  AddOptional(s, "--drop-watch-after-events", options.drop_watch_after_events,
              "Close each watch after N events");
  AddOptional(s, "--tls-cert", options.tls_cert,
              "Serve HTTPS with this PEM certificate (self-signed, or followed by its CA)");
  AddOptional(s, "--tls-key", options.tls_key, "PEM private key for --tls-cert");
  AddOptional(s, "--token", options.token, "Require this bearer token");
  s->add_option("--fault", options.faults,
                "Inject failures: VERB:RESOURCE:STATUS[:RETRY_AFTER[:COUNT]] (COUNT -1 = always)");
  AddOptional(s, "--drop-watches-every", options.drop_watches_every,
              "Close all watches periodically (e.g. 5s)");
  AddOptional(s, "--expire-history-every", options.expire_history_every,
              "Forget watch history periodically (e.g. 10s)");
  AddOptional(s, "--watch-list", options.watch_list,
              "Streaming lists, as the WatchList gate: on (default), off (refused with 422) or "
              "silent (accepted, never ended by the initial-events-end bookmark)");
  return s;
}

}  // namespace fk::cli
