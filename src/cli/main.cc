// fencekeeper: one binary, subcommands as in DESIGN §5.
#include <CLI/CLI.hpp>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"fencekeeper: fail-closed boundary reconciler for OpenShell sandboxes"};
  app.require_subcommand(1);

  fk::cli::MigrateOptions migrate;
  auto* m = app.add_subcommand("migrate", "Create or upgrade a journal (--check: report only)");
  m->add_option("--journal", migrate.journal, "Journal file")->required();
  m->add_flag("--check", migrate.check, "Report the schema version and pending migrations; change nothing");

  fk::cli::ReplayOptions replay;
  std::string format = "text";
  int64_t until = 0;
  std::string sandbox;
  auto* r = app.add_subcommand("replay", "Print the journal as a timeline; --check re-runs decide()");
  r->add_option("--journal", replay.journal, "Journal file")->required();
  auto* sandbox_opt = r->add_option("--sandbox", sandbox, "Only this sandbox (NAMESPACE/NAME)");
  auto* until_opt = r->add_option("--until", until, "Replay up to and including this seq")->check(CLI::PositiveNumber);
  r->add_flag("--check", replay.check, "Re-run decide() on every recorded observation; exit 1 on divergence");
  r->add_option("--format", format, "text or json")->check(CLI::IsMember({"text", "json"}));

  fk::cli::DemoOptions demo;
  std::string demo_dir;
  auto* d = app.add_subcommand("demo", "Run the upstream incident end to end and print what happened");
  auto* dir_opt = d->add_option("--dir", demo_dir, "Directory for the demo journal (default: a new temp dir)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : fk::cli::kExitUnusable;
  }

  if (*m) return fk::cli::RunMigrate(migrate, std::cout, std::cerr);
  if (*r) {
    replay.json = format == "json";
    if (*until_opt) replay.until = until;
    if (*sandbox_opt) replay.sandbox = sandbox;
    return fk::cli::RunReplay(replay, std::cout, std::cerr);
  }
  if (*d) {
    if (*dir_opt) demo.directory = demo_dir;
    return fk::cli::RunDemo(demo, std::cout, std::cerr);
  }
  return fk::cli::kExitUnusable;
}
