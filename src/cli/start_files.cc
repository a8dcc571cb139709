#include "cli/start_files.h"

#include <filesystem>
#include <system_error>

#include "journal/writer_lock.h"

namespace fk::cli {

// Beside the journal: what SQLite and the volume reserve add; beside its real
// path (a symlinked journal shares them): the writer lock's holder and lock.
StartFiles::StartFiles(const std::string& journal)
    : paths_{journal,
             journal + "-wal",
             journal + "-shm",
             journal + ".reserve",
             journal::WriterLock::HolderPath(journal),
             journal::WriterLock::LockPath(journal)},
      before_(Present()) {}

std::set<std::string> StartFiles::Present() const {
  std::set<std::string> present;
  for (const std::string& path : paths_) {
    std::error_code ec;
    if (std::filesystem::symlink_status(path, ec).type() != std::filesystem::file_type::not_found)
      present.insert(path);
  }
  return present;
}

void StartFiles::RemoveCreatedButLock() const {
  for (const std::string& path : Present()) {
    if (before_.contains(path) || path == paths_.back()) continue;
    std::error_code ignored;  // best effort: a file we cannot remove is no worse than before
    std::filesystem::remove(path, ignored);
  }
}

void StartFiles::RemoveCreatedLock() const {
  const std::string& lock = paths_.back();
  if (before_.contains(lock)) return;
  std::error_code ignored;  // as above
  std::filesystem::remove(lock, ignored);
}

}  // namespace fk::cli
