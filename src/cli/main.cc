// fencekeeper: one binary, subcommands as in docs/design.md#the-command-line-contract.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"
#include "cli/logging.h"
#include "cli/replay_flags.h"
#include "common/version.h"

int main(int argc, char** argv) {
  CLI::App app{"fencekeeper: fail-closed boundary reconciler for OpenShell sandboxes"};
  app.set_version_flag("--version", fk::VersionLine());
  app.require_subcommand(1);

  fk::cli::MigrateOptions migrate;
  auto* m = app.add_subcommand("migrate", "Create or upgrade a journal (--check: report only)");
  m->add_option("--journal", migrate.journal, "Journal file")->required();
  m->add_flag("--check", migrate.check,
              "Report the schema version and pending migrations; change nothing");

  std::string backup_journal, backup_to;
  auto* b = app.add_subcommand(
      "backup", "Copy a live journal consistently (SQLite online backup) and verify the copy");
  b->add_option("--journal", backup_journal, "Journal file")->required();
  b->add_option("--to", backup_to, "Backup file to create (must not exist)")->required();

  fk::cli::ReplayOptions replay;
  auto* r = fk::cli::AddReplayCommand(app, replay);

  fk::cli::RunOptions run;
  std::string run_kubeconfig, run_http, run_le_ns;
  auto* rn =
      app.add_subcommand("run", "Reconcile sandboxes against the namespace fences until stopped");
  rn->add_option("--journal", run.journal, "Journal file (created if missing)")->required();
  auto* run_kc_opt =
      rn->add_option("--kubeconfig", run_kubeconfig,
                     "Kubeconfig (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  rn->add_option("--context", run.context, "Kubeconfig context");
  rn->add_option("--namespace", run.namespaces, "Namespace to watch (repeatable; default: all)");
  rn->add_option("--selector", run.selector, "Sandbox label selector")->capture_default_str();
  rn->add_option("--resync", run.resync, "Re-evaluate every cached sandbox this often")
      ->capture_default_str();
  auto* run_http_opt = rn->add_option(
      "--http-addr", run_http,
      "HOST:PORT for /healthz and /readyz (and /metrics unless --metrics-addr is given)");
  std::string run_metrics;
  auto* run_metrics_opt = rn->add_option(
      "--metrics-addr", run_metrics,
      "HOST:PORT serving /metrics alone (e.g. :8081), to restrict it apart from the probes");
  rn->add_flag("--leader-elect", run.leader_elect,
               "Take part in leader election (Lease 'fencekeeper')");
  auto* run_le_ns_opt = rn->add_option("--leader-election-namespace", run_le_ns,
                                       "Namespace of the Lease (default: the config's)");
  rn->add_option("--lease-duration", run.lease_duration, "Leader election lease duration")
      ->capture_default_str();
  rn->add_option("--renew-deadline", run.renew_deadline, "Leader election renew deadline")
      ->capture_default_str();
  rn->add_option("--retry-period", run.retry_period, "Leader election retry period")
      ->capture_default_str();
  rn->add_option("--boundary-port", run.boundary_port, "TCP port of the intended fence")
      ->capture_default_str();
  rn->add_option("--log-format", run.log_format, "text or json")->capture_default_str();
  rn->add_option("--log-level", run.log_level, "trace, debug, info, warn, error")
      ->capture_default_str();
  rn->add_option("--kube-api-qps", run.kube_api_qps,
                 "Client-side limit: sustained API requests per second (0: none; the API server's "
                 "429s are honoured either way)")
      ->capture_default_str();
  rn->add_option("--workers", run.workers,
                 "Sandboxes reconciled concurrently (never two workers on one sandbox)")
      ->capture_default_str();
  rn->add_option("--kube-api-burst", run.kube_api_burst, "API requests allowed at once")
      ->capture_default_str();

  fk::cli::DemoOptions demo;
  std::string demo_dir;
  auto* d =
      app.add_subcommand("demo", "Run the upstream incident end to end and print what happened");
  auto* dir_opt =
      d->add_option("--dir", demo_dir, "Directory for the demo journal (default: a new temp dir)");

  fk::cli::SimCommandOptions sim;
  std::string scenario, kubeconfig_out, tls_cert, tls_key, token;
  std::string latency;
  int drop_after = 0;
  auto* s = app.add_subcommand("sim", "Serve the simulated Kubernetes API until stopped");
  s->add_option("--listen", sim.listen, "HOST:PORT to listen on")->capture_default_str();
  auto* scenario_opt = s->add_option("--scenario", scenario,
                                     "Scenario file (YAML), or a built-in name: incident-3525");
  auto* kubeconfig_opt =
      s->add_option("--write-kubeconfig", kubeconfig_out, "Write a kubeconfig for this server");
  auto* latency_opt = s->add_option("--latency", latency, "Delay every answer (e.g. 50ms)");
  auto* drop_opt =
      s->add_option("--drop-watch-after-events", drop_after, "Close each watch after N events");
  auto* cert_opt = s->add_option("--tls-cert", tls_cert, "Serve HTTPS with this PEM certificate");
  auto* key_opt = s->add_option("--tls-key", tls_key, "PEM private key for --tls-cert");
  auto* token_opt = s->add_option("--token", token, "Require this bearer token");
  s->add_option("--fault", sim.faults,
                "Inject failures: VERB:RESOURCE:STATUS[:RETRY_AFTER[:COUNT]] (COUNT -1 = always)");
  std::string drop_every, expire_every;
  auto* drop_every_opt =
      s->add_option("--drop-watches-every", drop_every, "Close all watches periodically (e.g. 5s)");
  auto* expire_every_opt = s->add_option("--expire-history-every", expire_every,
                                         "Forget watch history periodically (e.g. 10s)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : fk::cli::kExitUnusable;
  }

  // Every subcommand logs through the escaping sink; `run` reconfigures it from its flags.
  (void)fk::cli::SetUpLogging("text", "info");
  if (*m) return fk::cli::RunMigrate(migrate, std::cout, std::cerr);
  if (*b) return fk::cli::RunBackup(backup_journal, backup_to, std::cout, std::cerr);
  if (*rn) {
    if (*run_kc_opt) run.kubeconfig = run_kubeconfig;
    if (*run_http_opt) run.http_addr = run_http;
    if (*run_metrics_opt) run.metrics_addr = run_metrics;
    if (*run_le_ns_opt) run.leader_election_namespace = run_le_ns;
    return fk::cli::RunRun(run, std::cerr);
  }
  if (*r) return fk::cli::RunReplay(replay, std::cout, std::cerr);
  if (*s) {
    if (*scenario_opt) sim.scenario = scenario;
    if (*kubeconfig_opt) sim.write_kubeconfig = kubeconfig_out;
    if (*latency_opt) sim.latency = latency;
    if (*drop_opt) sim.drop_watch_after_events = drop_after;
    if (*cert_opt) sim.tls_cert = tls_cert;
    if (*key_opt) sim.tls_key = tls_key;
    if (*token_opt) sim.token = token;
    if (*drop_every_opt) sim.drop_watches_every = drop_every;
    if (*expire_every_opt) sim.expire_history_every = expire_every;
    return fk::cli::RunSim(sim, std::cout, std::cerr);
  }
  if (*d) {
    if (*dir_opt) demo.directory = demo_dir;
    return fk::cli::RunDemo(demo, std::cout, std::cerr);
  }
  return fk::cli::kExitUnusable;
}
