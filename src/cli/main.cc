// fencekeeper: one binary, subcommands as in docs/design.md#the-command-line-contract.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>

#include "cli/command_flags.h"
#include "cli/commands.h"
#include "cli/logging.h"
#include "cli/replay_flags.h"
#include "common/version.h"

namespace {

// What was typed, one struct per subcommand; each Add*Command fills one.
struct Typed {
  fk::cli::MigrateOptions migrate;
  fk::cli::BackupOptions backup;
  fk::cli::StatusOptions status;
  std::vector<fk::cli::VerifyOptions> verify;  // one per --journal
  fk::cli::ReplayOptions replay;
  fk::cli::RunOptions run;
  fk::cli::DemoOptions demo;
  fk::cli::SimCommandOptions sim;
};

int Dispatch(CLI::App& app, const Typed& typed) {
  using namespace fk::cli;
  // Every subcommand logs through the escaping sink; `run` reconfigures it from its flags.
  // "text"/"info" are always valid: this cannot fail.
  (void)SetUpLogging("text", "info");
  const std::string chosen = app.get_subcommands().front()->get_name();
  if (chosen == "migrate") return RunMigrate(typed.migrate, std::cout, std::cerr);
  if (chosen == "backup")
    return RunBackup(typed.backup.journal, typed.backup.to, std::cout, std::cerr);
  if (chosen == "journal") return RunJournalVerify(typed.verify, std::cout, std::cerr);
  if (chosen == "run") return RunRun(typed.run, std::cerr);
  if (chosen == "replay") return RunReplay(typed.replay, std::cout, std::cerr);
  if (chosen == "status") return RunStatus(typed.status, std::cout, std::cerr);
  if (chosen == "sim") return RunSim(typed.sim, std::cout, std::cerr);
  if (chosen == "demo") return RunDemo(typed.demo, std::cout, std::cerr);
  return kExitUnusable;
}

int ParseAndDispatch(int argc, char** argv) {
  CLI::App app{"fencekeeper: fail-closed boundary reconciler for OpenShell sandboxes"};
  app.set_version_flag("--version", fk::VersionLine());
  app.require_subcommand(1);
  Typed typed;
  fk::cli::AddMigrateCommand(app, typed.migrate);
  fk::cli::AddBackupCommand(app, typed.backup);
  fk::cli::AddJournalCommand(app, typed.verify);
  fk::cli::AddReplayCommand(app, typed.replay);
  fk::cli::AddStatusCommand(app, typed.status);
  fk::cli::AddRunCommand(app, typed.run);
  fk::cli::AddDemoCommand(app, typed.demo);
  fk::cli::AddSimCommand(app, typed.sim);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : fk::cli::kExitUnusable;
  }
  return Dispatch(app, typed);
}

}  // namespace

int main(int argc, char** argv) {
  // Subcommands report their own errors; anything that still escapes is a bug,
  // and it must end the process loudly with the "unusable" code, not abort.
  try {
    return ParseAndDispatch(argc, argv);
  } catch (const std::exception& e) {
    fk::cli::ReportFatal(std::cerr, fk::log::Format::kText, "fencekeeper stopped", e.what());
  } catch (...) {
    fk::cli::ReportFatal(std::cerr, fk::log::Format::kText, "fencekeeper stopped",
                         "unknown exception");
  }
  return fk::cli::kExitUnusable;
}
