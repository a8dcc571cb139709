// The `replay` subcommand's flags, registered on the CLI11 app by one function
// so main() stays a list of subcommands.
#pragma once

#include "cli/commands.h"

namespace CLI {
class App;
}

namespace fk::cli {

// Adds `replay` to `app`; after parsing, `options` holds what was typed.
CLI::App* AddReplayCommand(CLI::App& app, ReplayOptions& options);

}  // namespace fk::cli
