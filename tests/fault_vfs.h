// An SQLite VFS for tests that wraps the default (unix) VFS and fails or
// "loses power" on command, in the manner of SQLite's own crash tests:
//
//   - fail_writes: every xWrite / xTruncate fails with that code (SQLITE_FULL
//     for a full disk, SQLITE_IOERR_WRITE ...); fail_syncs likewise for xSync.
//   - power loss: every write since the last successful xSync of its file is
//     remembered (the bytes it overwrote, the size before it). CrashAtSync(n)
//     makes the n-th xSync from now fail and every later operation fail too
//     (the machine is off); LosePower() then undoes, on disk, every write that
//     no sync made durable and removes the -shm file, as a reboot would.
//   - a volume: SetVolume(dir, capacity) makes every file in `dir` share
//     `capacity` bytes (in 4 KiB blocks, by file length); a write or a
//     truncate that would grow a file past what is free fails with
//     SQLITE_FULL. FillVolume() is another writer taking every free byte.
//
// One instance per test; it registers itself under a unique name (pass name()
// as journal::OpenOptions::vfs) and unregisters on destruction. Not
// thread-safe, but for the volume (SetVolume, FillVolume, FreeVolume,
// VolumeSpace), which a test may change while other threads write.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace fk::testing {

class FaultVfs {
 public:
  FaultVfs();
  ~FaultVfs();
  FaultVfs(const FaultVfs&) = delete;
  FaultVfs& operator=(const FaultVfs&) = delete;

  const std::string& name() const { return name_; }

  int fail_writes = SQLITE_OK;  // non-OK: every write/truncate fails with it
  int fail_syncs = SQLITE_OK;   // non-OK: every sync fails with it
  // Non-empty: writes fail with SQLITE_FULL while this file exists (a volume
  // with no room but the journal's reserve file).
  std::string full_while_exists;

  // The volume (see above). Capacity 0: unbounded (the default).
  void SetVolume(const std::string& dir, int64_t capacity);
  void FillVolume();  // another writer takes every free byte
  void FreeVolume();  // ... and gives them all back
  struct Space {
    int64_t free_bytes = 0;
    int64_t size_bytes = 0;
  };
  Space VolumeSpace() const;
  int full_writes() const;  // writes refused for want of space

  // The n-th xSync from now (1 = the next) never completes, and nothing after it does.
  void CrashAtSync(int n) { crash_countdown_ = n; }
  bool crashed() const { return dead_; }
  int syncs() const { return syncs_; }
  // After the connection is closed: restores every file to its last synced
  // content and removes `db_path`-shm.
  void LosePower(const std::string& db_path);

  // Called by the VFS methods (public for them; not for tests).
  struct Undo {
    sqlite3_int64 offset;
    std::string bytes;  // what the write overwrote
  };
  struct FileLog {
    bool dirty = false;
    sqlite3_int64 synced_size = 0;
    std::vector<Undo> undo;
  };
  int BeforeWrite(const std::string& path, sqlite3_file* real, sqlite3_int64 offset, int amount);
  int BeforeTruncate(const std::string& path, sqlite3_file* real, sqlite3_int64 size);
  int Sync(const std::string& path, sqlite3_file* real, int flags);
  bool dead() const { return dead_; }
  sqlite3_vfs* root() const { return root_; }

 private:
  void Track(const std::string& path, sqlite3_file* real);
  // SQLITE_FULL when growing `path` to `end` bytes needs more than is free.
  int Room(const std::string& path, sqlite3_file* real, sqlite3_int64 end);
  int64_t UsedLocked() const;

  std::string name_;
  sqlite3_vfs* root_ = nullptr;
  sqlite3_vfs vfs_{};
  std::map<std::string, FileLog> logs_;
  int crash_countdown_ = 0;
  int syncs_ = 0;
  bool dead_ = false;
  mutable std::mutex volume_mu_;
  std::string volume_dir_;  // under volume_mu_, as the three below
  int64_t capacity_ = 0;
  int64_t others_ = 0;  // taken by other writers
  int full_writes_ = 0;
};

}  // namespace fk::testing
