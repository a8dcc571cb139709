// The flags of migrate, backup, run, demo and sim, each registered on the
// CLI11 app by one function (as replay_flags.h does for replay), so main()
// only parses and dispatches.
#pragma once

#include <string>
#include <vector>

#include "cli/commands.h"

namespace CLI {
class App;
}

namespace fk::cli {

// backup has no options struct of its own: RunBackup takes the two paths.
struct BackupOptions {
  std::string journal;
  std::string to;
};

// Each adds its subcommand to `app`; after parsing, `options` holds what was typed.
CLI::App* AddMigrateCommand(CLI::App& app, MigrateOptions& options);
// `journal verify`, under the `journal` command: --journal repeats, and each
// --archive and --expect-head belongs to the --journal before it (to the
// first, when given before any).
CLI::App* AddJournalCommand(CLI::App& app, std::vector<VerifyOptions>& verify);
CLI::App* AddBackupCommand(CLI::App& app, BackupOptions& options);
CLI::App* AddRunCommand(CLI::App& app, RunOptions& options);
CLI::App* AddDemoCommand(CLI::App& app, DemoOptions& options);
CLI::App* AddStatusCommand(CLI::App& app, StatusOptions& options);
CLI::App* AddSimCommand(CLI::App& app, SimCommandOptions& options);

}  // namespace fk::cli
