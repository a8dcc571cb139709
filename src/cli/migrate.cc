#include <ostream>

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

int RunBackup(const std::string& journal, const std::string& to, std::ostream& out,
              std::ostream& err) {
  auto r = journal::BackupJournal(journal, to);
  if (!r.ok()) {
    err << "fencekeeper backup: " << r.status().ToString() << "\n";
    return kExitUnusable;
  }
  out << "backup of '" << journal << "' written to '" << to << "': " << r->events
      << " events (last seq " << r->last_seq << "), schema version " << r->schema_version << ", "
      << r->bytes << " bytes, integrity_check ok\n";
  return kExitOk;
}

}  // namespace fk::cli
