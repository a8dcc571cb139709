#include "fault_vfs.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <stdexcept>

namespace fk::testing {
namespace {

// Our file handle, followed in the same allocation by the wrapped VFS's.
struct File {
  sqlite3_file base;
  FaultVfs* owner;
  std::string* path;  // null for files without a name (temporary files)
  sqlite3_file* real() { return reinterpret_cast<sqlite3_file*>(this + 1); }
};
static_assert(sizeof(File) % 8 == 0, "the wrapped handle that follows must stay aligned");

File* F(sqlite3_file* f) { return reinterpret_cast<File*>(f); }
FaultVfs* Owner(sqlite3_vfs* v) { return static_cast<FaultVfs*>(v->pAppData); }
sqlite3_vfs* Root(sqlite3_vfs* v) { return Owner(v)->root(); }
const sqlite3_io_methods* M(sqlite3_file* f) { return F(f)->real()->pMethods; }

int Close(sqlite3_file* f) {
  const int rc = M(f)->xClose(F(f)->real());
  delete F(f)->path;
  return rc;
}
int Read(sqlite3_file* f, void* buf, int n, sqlite3_int64 off) {
  return M(f)->xRead(F(f)->real(), buf, n, off);
}
int Write(sqlite3_file* f, const void* buf, int n, sqlite3_int64 off) {
  if (F(f)->path) {
    if (int rc = F(f)->owner->BeforeWrite(*F(f)->path, F(f)->real(), off, n); rc != SQLITE_OK)
      return rc;
  }
  return M(f)->xWrite(F(f)->real(), buf, n, off);
}
int Truncate(sqlite3_file* f, sqlite3_int64 size) {
  if (F(f)->path) {
    if (int rc = F(f)->owner->BeforeTruncate(*F(f)->path, F(f)->real(), size); rc != SQLITE_OK)
      return rc;
  }
  return M(f)->xTruncate(F(f)->real(), size);
}
int Sync(sqlite3_file* f, int flags) {
  if (!F(f)->path) return M(f)->xSync(F(f)->real(), flags);
  return F(f)->owner->Sync(*F(f)->path, F(f)->real(), flags);
}
int FileSize(sqlite3_file* f, sqlite3_int64* size) { return M(f)->xFileSize(F(f)->real(), size); }
int Lock(sqlite3_file* f, int l) { return M(f)->xLock(F(f)->real(), l); }
int Unlock(sqlite3_file* f, int l) { return M(f)->xUnlock(F(f)->real(), l); }
int CheckReserved(sqlite3_file* f, int* out) { return M(f)->xCheckReservedLock(F(f)->real(), out); }
int FileControl(sqlite3_file* f, int op, void* arg) {
  return M(f)->xFileControl(F(f)->real(), op, arg);
}
int SectorSize(sqlite3_file* f) { return M(f)->xSectorSize(F(f)->real()); }
int DeviceCharacteristics(sqlite3_file* f) { return M(f)->xDeviceCharacteristics(F(f)->real()); }
int ShmMap(sqlite3_file* f, int page, int size, int extend, void volatile** out) {
  return M(f)->xShmMap(F(f)->real(), page, size, extend, out);
}
int ShmLock(sqlite3_file* f, int offset, int n, int flags) {
  return M(f)->xShmLock(F(f)->real(), offset, n, flags);
}
void ShmBarrier(sqlite3_file* f) { M(f)->xShmBarrier(F(f)->real()); }
int ShmUnmap(sqlite3_file* f, int del) { return M(f)->xShmUnmap(F(f)->real(), del); }
int Fetch(sqlite3_file* f, sqlite3_int64 off, int n, void** out) {
  return M(f)->xFetch(F(f)->real(), off, n, out);
}
int Unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return M(f)->xUnfetch(F(f)->real(), off, p);
}

const sqlite3_io_methods kMethods = {3,
                                     Close,
                                     Read,
                                     Write,
                                     Truncate,
                                     Sync,
                                     FileSize,
                                     Lock,
                                     Unlock,
                                     CheckReserved,
                                     FileControl,
                                     SectorSize,
                                     DeviceCharacteristics,
                                     ShmMap,
                                     ShmLock,
                                     ShmBarrier,
                                     ShmUnmap,
                                     Fetch,
                                     Unfetch};

int Open(sqlite3_vfs* v, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  File* file = F(f);
  file->base.pMethods = nullptr;
  file->owner = Owner(v);
  file->path = nullptr;
  const int rc = Root(v)->xOpen(Root(v), name, file->real(), flags, out_flags);
  if (rc != SQLITE_OK) return rc;
  if (name) file->path = new std::string(name);
  file->base.pMethods = &kMethods;
  return SQLITE_OK;
}
int Delete(sqlite3_vfs* v, const char* name, int sync_dir) {
  if (Owner(v)->dead()) return SQLITE_IOERR_DELETE;
  return Root(v)->xDelete(Root(v), name, sync_dir);
}
int Access(sqlite3_vfs* v, const char* name, int flags, int* out) {
  return Root(v)->xAccess(Root(v), name, flags, out);
}
int FullPathname(sqlite3_vfs* v, const char* name, int n, char* out) {
  return Root(v)->xFullPathname(Root(v), name, n, out);
}
void* DlOpen(sqlite3_vfs* v, const char* name) { return Root(v)->xDlOpen(Root(v), name); }
void DlError(sqlite3_vfs* v, int n, char* out) { Root(v)->xDlError(Root(v), n, out); }
void (*DlSym(sqlite3_vfs* v, void* h, const char* sym))(void) {
  return Root(v)->xDlSym(Root(v), h, sym);
}
void DlClose(sqlite3_vfs* v, void* h) { Root(v)->xDlClose(Root(v), h); }
int Randomness(sqlite3_vfs* v, int n, char* out) { return Root(v)->xRandomness(Root(v), n, out); }
int Sleep(sqlite3_vfs* v, int us) { return Root(v)->xSleep(Root(v), us); }
int CurrentTime(sqlite3_vfs* v, double* out) { return Root(v)->xCurrentTime(Root(v), out); }
int GetLastError(sqlite3_vfs* v, int n, char* out) {
  return Root(v)->xGetLastError(Root(v), n, out);
}
int CurrentTimeInt64(sqlite3_vfs* v, sqlite3_int64* out) {
  return Root(v)->xCurrentTimeInt64(Root(v), out);
}

std::atomic<int> instances{0};

}  // namespace

FaultVfs::FaultVfs() : name_("fk-fault-" + std::to_string(++instances)) {
  root_ = sqlite3_vfs_find(nullptr);
  if (!root_) throw std::runtime_error("no default SQLite VFS");
  vfs_.iVersion = 2;
  vfs_.szOsFile = static_cast<int>(sizeof(File)) + root_->szOsFile;
  vfs_.mxPathname = root_->mxPathname;
  vfs_.zName = name_.c_str();
  vfs_.pAppData = this;
  vfs_.xOpen = Open;
  vfs_.xDelete = Delete;
  vfs_.xAccess = Access;
  vfs_.xFullPathname = FullPathname;
  vfs_.xDlOpen = DlOpen;
  vfs_.xDlError = DlError;
  vfs_.xDlSym = DlSym;
  vfs_.xDlClose = DlClose;
  vfs_.xRandomness = Randomness;
  vfs_.xSleep = Sleep;
  vfs_.xCurrentTime = CurrentTime;
  vfs_.xGetLastError = GetLastError;
  vfs_.xCurrentTimeInt64 = CurrentTimeInt64;
  sqlite3_vfs_register(&vfs_, /*makeDflt=*/0);
}

FaultVfs::~FaultVfs() { sqlite3_vfs_unregister(&vfs_); }

void FaultVfs::Track(const std::string& path, sqlite3_file* real) {
  FileLog& log = logs_[path];
  if (log.dirty) return;
  log.dirty = true;
  real->pMethods->xFileSize(real, &log.synced_size);
}

int FaultVfs::BeforeWrite(const std::string& path, sqlite3_file* real, sqlite3_int64 offset,
                          int amount) {
  if (dead_) return SQLITE_IOERR_WRITE;
  if (fail_writes != SQLITE_OK) return fail_writes;
  if (!full_while_exists.empty() && std::filesystem::exists(full_while_exists)) return SQLITE_FULL;
  if (int rc = Room(path, real, offset + amount); rc != SQLITE_OK) return rc;
  Track(path, real);
  sqlite3_int64 size = 0;
  real->pMethods->xFileSize(real, &size);
  const sqlite3_int64 kept = std::max<sqlite3_int64>(0, std::min(size, offset + amount) - offset);
  Undo u{offset, std::string(static_cast<size_t>(kept), '\0')};
  if (kept > 0) real->pMethods->xRead(real, u.bytes.data(), static_cast<int>(kept), offset);
  logs_[path].undo.push_back(std::move(u));
  return SQLITE_OK;
}

int FaultVfs::BeforeTruncate(const std::string& path, sqlite3_file* real, sqlite3_int64 size) {
  if (dead_) return SQLITE_IOERR_TRUNCATE;
  if (fail_writes != SQLITE_OK) return fail_writes;
  if (int rc = Room(path, real, size); rc != SQLITE_OK) return rc;
  Track(path, real);
  sqlite3_int64 current = 0;
  real->pMethods->xFileSize(real, &current);
  if (current > size) {
    Undo u{size, std::string(static_cast<size_t>(current - size), '\0')};
    real->pMethods->xRead(real, u.bytes.data(), static_cast<int>(u.bytes.size()), size);
    logs_[path].undo.push_back(std::move(u));
  }
  return SQLITE_OK;
}

int FaultVfs::Sync(const std::string& path, sqlite3_file* real, int flags) {
  ++syncs_;
  if (dead_) return SQLITE_IOERR_FSYNC;
  if (crash_countdown_ > 0 && --crash_countdown_ == 0) {
    dead_ = true;  // the power goes off during this sync: it never completes
    return SQLITE_IOERR_FSYNC;
  }
  if (fail_syncs != SQLITE_OK) return fail_syncs;
  const int rc = real->pMethods->xSync(real, flags);
  if (rc == SQLITE_OK) logs_.erase(path);  // durable from here on
  return rc;
}

namespace {
constexpr int64_t kBlock = 4096;
int64_t Blocks(int64_t bytes) { return (bytes + kBlock - 1) / kBlock * kBlock; }
}  // namespace

void FaultVfs::SetVolume(const std::string& dir, int64_t capacity) {
  std::lock_guard lock(volume_mu_);
  volume_dir_ = dir;
  capacity_ = capacity;
  others_ = 0;
}

int64_t FaultVfs::UsedLocked() const {
  int64_t used = others_;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(volume_dir_, ec)) {
    std::error_code size_ec;
    if (entry.is_regular_file(size_ec))
      used += Blocks(static_cast<int64_t>(entry.file_size(size_ec)));
  }
  return used;
}

void FaultVfs::FillVolume() {
  std::lock_guard lock(volume_mu_);
  others_ += std::max<int64_t>(0, capacity_ - UsedLocked());
}

void FaultVfs::FreeVolume() {
  std::lock_guard lock(volume_mu_);
  others_ = 0;
}

FaultVfs::Space FaultVfs::VolumeSpace() const {
  std::lock_guard lock(volume_mu_);
  if (capacity_ == 0) return {};
  return {std::max<int64_t>(0, capacity_ - UsedLocked()), capacity_};
}

int FaultVfs::full_writes() const {
  std::lock_guard lock(volume_mu_);
  return full_writes_;
}

int FaultVfs::Room(const std::string& path, sqlite3_file* real, sqlite3_int64 end) {
  std::lock_guard lock(volume_mu_);
  if (capacity_ == 0) return SQLITE_OK;
  if (std::filesystem::absolute(path).parent_path() != std::filesystem::absolute(volume_dir_))
    return SQLITE_OK;
  sqlite3_int64 size = 0;
  real->pMethods->xFileSize(real, &size);
  const int64_t grows = Blocks(end) - Blocks(size);
  if (grows <= 0 || grows <= capacity_ - UsedLocked()) return SQLITE_OK;
  ++full_writes_;
  return SQLITE_FULL;
}

void FaultVfs::LosePower(const std::string& db_path) {
  for (auto& [path, log] : logs_) {
    if (!log.dirty) continue;
    const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) continue;
    for (auto it = log.undo.rbegin(); it != log.undo.rend(); ++it) {
      if (::pwrite(fd, it->bytes.data(), it->bytes.size(), it->offset) < 0) break;
    }
    if (::ftruncate(fd, log.synced_size) != 0) {
      // Leave the longer file: recovery must cope with trailing garbage anyway.
    }
    ::close(fd);
  }
  logs_.clear();
  ::unlink((db_path + "-shm").c_str());  // the wal-index is shared memory: a reboot loses it
  dead_ = false;
}

}  // namespace fk::testing
