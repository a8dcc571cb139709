// `fencekeeper replay --check` on a journal, for tests.
#pragma once

#include <sstream>
#include <string>

#include "cli/commands.h"

namespace fk::testing {

// Runs `replay --check` on `path`; returns its error output ("" when it
// passes: exit code 0 and nothing on stderr), and its timeline in `*timeline`.
inline std::string ReplayCheckErrors(const std::string& path, std::string* timeline = nullptr) {
  std::ostringstream out, err;
  cli::ReplayOptions o;
  o.journals = {path};
  o.check = true;
  const int code = cli::RunReplay(o, out, err);
  if (timeline) {  // --check prints its verdict only: the timeline is a replay of its own
    std::ostringstream rows, ignored;
    o.check = false;
    (void)cli::RunReplay(o, rows, ignored);
    *timeline = out.str() + rows.str();
  }
  if (code != cli::kExitOk && err.str().empty()) return "exit code " + std::to_string(code);
  return err.str();
}

}  // namespace fk::testing
