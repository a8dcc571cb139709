// The files a start of `run` creates beside its journal: the journal itself,
// its -wal and -shm, the reserve, the writer lock and its holder file. A start
// that fails (exit 2: a bad kubeconfig, a port in use) removes those that did
// not exist before it, so the retry with a corrected flag finds the directory
// as it was and nothing looks like a journal that ever ran.
#pragma once

#include <set>
#include <string>
#include <vector>

namespace fk::cli {

class StartFiles {
 public:
  // Notes which of the journal's files exist now.
  explicit StartFiles(const std::string& journal);

  // Removes the journal's files that did not exist when this was made, but
  // the lock: call with the writer lock still held and the journal closed
  // (no other writer can have created them meanwhile).
  void RemoveCreatedButLock() const;
  // The lock file, if this start created it: call once the lock is released.
  void RemoveCreatedLock() const;

 private:
  std::set<std::string> Present() const;
  const std::vector<std::string> paths_;  // the journal's files; the lock's last
  const std::set<std::string> before_;
};

}  // namespace fk::cli
