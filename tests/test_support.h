// Helpers shared by the tests: a temporary directory, file bytes, and a
// builder for decision snapshots that starts from a healthy running sandbox.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>

#include <chrono>
#include <thread>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "domain/observation.h"

namespace fk::testing {

class TempDir {
 public:
  explicit TempDir(const std::filesystem::path& parent = std::filesystem::temp_directory_path()) {
    std::string tmpl = (parent / "fk-test-XXXXXX").string();
    if (!std::filesystem::is_directory(parent))
      tmpl = (std::filesystem::temp_directory_path() / "fk-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string File(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// What `command` (run by /bin/sh) prints on stdout, and its exit code.
struct CommandResult {
  std::string out;
  int exit_code = -1;
};
inline CommandResult RunShell(const std::string& command) {
  CommandResult r;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buf[4096];
    for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
    const int status = pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return r;
}

inline std::string ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void WriteBytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A running sandbox admitted under fence "fence-uid" generation 1, with both
// pods present and matching: decide() says healthy.
inline domain::Snapshot HealthySnapshot(const std::string& name = "sb-1",
                                        const std::string& ns = "agents") {
  domain::Snapshot s;
  s.sandbox.ns = ns;
  s.sandbox.name = name;
  s.sandbox.uid = "uid-" + ns + "-" + name;
  s.sandbox.generation = 2;
  s.sandbox.should_run = true;
  s.sandbox.fence_uid = "fence-uid";
  s.sandbox.fence_generation = 1;
  s.sandbox.workload_uid = "pod-" + name;
  s.sandbox.supervisor_uid = "sup-" + name;
  s.workload_fence = {true, "fence-uid", 1, true};
  s.supervisor_fence = {true, "sup-fence-uid", 1, true};
  s.workload_pod = {true, "pod-" + name};
  s.supervisor_pod = {true, "sup-" + name};
  return s;
}

// The same sandbox after the workload fence rolled to generation 2.
inline domain::Snapshot StaleSnapshot(const std::string& name = "sb-1") {
  domain::Snapshot s = HealthySnapshot(name);
  s.workload_fence.generation = 2;
  return s;
}

// Polls `pred` until it holds or `deadline` passes; returns the last answer.
// Tests wait on conditions with deadlines, never on fixed sleeps.
template <class Pred>
bool Eventually(Pred pred, std::chrono::milliseconds deadline = std::chrono::seconds(30)) {
  const auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return pred();
}

// Three running sandboxes in namespace "ns", admitted under fence generation
// 1 while the fence is at 2: all three are stale (a scenario, sim/scenario.h).
inline constexpr const char* kThreeStaleSandboxes = R"(
namespaces:
  - name: ns
    fence: {generation: 2}
    sandboxes:
      - {name: a, mode: Running, admittedFenceGeneration: 1}
      - {name: b, mode: Running, admittedFenceGeneration: 1}
      - {name: c, mode: Running, admittedFenceGeneration: 1}
)";
inline constexpr const char* kNsSandboxesPath =
    "/apis/agents.x-k8s.io/v1beta1/namespaces/ns/sandboxes";

}  // namespace fk::testing
