// What this binary is: the project version (CMake's PROJECT_VERSION, the one
// place it is defined) and the git commit it was built from ("unknown" when
// built outside a clone without FENCEKEEPER_GIT_COMMIT). `--version`, the
// User-Agent, the build-info metric and the start-up log all read these.
#pragma once

#include <string>

namespace fk {

const char* Version();    // "0.1.0"
const char* GitCommit();  // 12 hex digits, or "unknown"

// "fencekeeper 0.1.0 (commit 0123456789ab)"
std::string VersionLine();
// "fencekeeper/0.1.0 (linux/amd64) commit/0123456789ab", in the shape
// client-go uses, so API server audit logs name the build that wrote.
std::string UserAgent();

}  // namespace fk
