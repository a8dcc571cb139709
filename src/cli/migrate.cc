#include <filesystem>
#include <fstream>
#include <ostream>

#include "common/random_id.h"

#include "cli/commands.h"
#include "journal/backup.h"
#include "journal/journal.h"
#include "journal/migrations.h"
#include "journal/writer_lock.h"

namespace fk::cli {

int RunMigrate(const MigrateOptions& options, std::ostream& out, std::ostream& err) {
  const auto unusable = [&err](const Status& s) {
    err << "fencekeeper migrate: " << s.ToString() << "\n";
    return kExitUnusable;
  };
  // A writer, unless it only reports: the journal's writer lock before the
  // file is inspected, created or migrated, held until we return.
  std::unique_ptr<journal::WriterLock> writer_lock;
  if (!options.check) {
    auto lock = journal::WriterLock::Acquire(options.journal, "migrate");
    if (!lock.ok()) return unusable(lock.status());
    writer_lock = std::move(*lock);
  }
  auto info = journal::InspectJournalFile(options.journal);
  if (!info.ok()) return unusable(info.status());
  const int latest = journal::LatestSchemaVersion();
  const int from = info->exists && !info->empty ? info->user_version : 0;
  if (options.check) {
    if (!info->exists || info->empty) {
      out << "journal '" << options.journal << "' "
          << (info->exists ? "is empty" : "does not exist")
          << "; migrate would create it at schema version " << latest << "\n";
      return kExitOk;
    }
    out << "journal '" << options.journal << "': schema version " << from
        << ", this fencekeeper knows " << latest << "\n";
    bool pending = false;
    for (const auto& m : journal::EmbeddedMigrations()) {
      if (m.version > from) {
        out << "  pending migration: " << m.name << "\n";
        pending = true;
      }
    }
    if (!pending) out << "  up to date\n";
    return kExitOk;
  }
  auto j = journal::Journal::Open(options.journal);
  if (!j.ok()) return unusable(j.status());
  if (from == latest) {
    out << "journal '" << options.journal << "' is up to date at schema version " << latest << "\n";
  } else {
    out << "journal '" << options.journal << "' migrated from schema version " << from << " to "
        << (*j)->schema_version() << "\n";
    for (const auto& m : journal::EmbeddedMigrations()) {
      if (m.version > from) out << "  applied " << m.name << "\n";
    }
  }
  return kExitOk;
}

namespace {

std::string BackupReportLine(const std::string& journal, const std::string& to,
                             const journal::BackupReport& r) {
  return "backup of '" + journal + "' written to '" + to + "': " + std::to_string(r.events) +
         " events (last seq " + std::to_string(r.last_seq) + "), schema version " +
         std::to_string(r.schema_version) + ", " + std::to_string(r.bytes) +
         " bytes, integrity_check ok\n";
}

// `--to -`: the copy is made and checked in $TMPDIR, then streamed to `out`
// and removed, so a journal leaves an image without a shell or tar
// (`kubectl exec POD -- fencekeeper backup --journal J --to - > copy.db`).
// The report goes to `err`: `out` carries the file.
int BackupToStream(const std::string& journal, std::ostream& out, std::ostream& err) {
  const std::filesystem::path tmp =
      std::filesystem::temp_directory_path() / ("fencekeeper-backup-" + NewWriterId() + ".db");
  auto r = journal::BackupJournal(journal, tmp.string());
  if (!r.ok()) {
    err << "fencekeeper backup: " << r.status().ToString() << "\n";
    return kExitUnusable;
  }
  std::ifstream in(tmp, std::ios::binary);
  out << in.rdbuf();
  out.flush();
  const bool written = in.good() && out.good();
  in.close();
  std::error_code ignored;  // the copy is in $TMPDIR; what matters is what was streamed
  std::filesystem::remove(tmp, ignored);
  if (!written) {
    err << "fencekeeper backup: IOError: the copy could not be written to standard output\n";
    return kExitUnusable;
  }
  err << BackupReportLine(journal, "-", *r);
  return kExitOk;
}

}  // namespace

int RunBackup(const std::string& journal, const std::string& to, std::ostream& out,
              std::ostream& err) {
  if (to == "-") return BackupToStream(journal, out, err);
  auto r = journal::BackupJournal(journal, to);
  if (!r.ok()) {
    err << "fencekeeper backup: " << r.status().ToString() << "\n";
    return kExitUnusable;
  }
  out << BackupReportLine(journal, to, *r);
  return kExitOk;
}

}  // namespace fk::cli
