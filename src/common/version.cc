#include "common/version.h"

namespace fk {
namespace {

constexpr const char* kArch =
#if defined(__x86_64__)
    "amd64";
#elif defined(__aarch64__)
    "arm64";
#else
    "unknown";
#endif

}  // namespace

std::string VersionLine() {
  return std::string("fencekeeper ") + Version() + " (commit " + GitCommit() + ")";
}

std::string UserAgent() {
  return std::string("fencekeeper/") + Version() + " (linux/" + kArch + ") commit/" + GitCommit();
}

}  // namespace fk
