#include "reconciler/journal_metrics.h"

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "common/log.h"

namespace fk::reconciler {
namespace {

int64_t FileSize(const std::string& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<int64_t>(size);  // a WAL truncated away is 0 bytes
}

// The oldest pending intent's seq and how many are pending.
std::pair<int64_t, size_t> OldestPending(const journal::Journal& journal) {
  return journal.Read([](const domain::JournalState& s) -> std::pair<int64_t, size_t> {
    if (s.pending_intents.empty()) return {0, 0};
    return {s.pending_intents.begin()->first, s.pending_intents.size()};
  });
}

double AgeOf(const journal::Journal& journal, int64_t seq, WallTime now) {
  std::optional<double> recorded;
  (void)journal.ForEachEvent(seq, seq, [&](const domain::Event& e) {
    recorded = ParseJournalTime(e.recorded_at);
    return Status::Ok();
  });
  if (!recorded) return 0;
  const double now_s = std::chrono::duration<double>(now.time_since_epoch()).count();
  return std::max(0.0, now_s - *recorded);
}

}  // namespace

std::optional<double> ParseJournalTime(const std::string& text) {
  std::tm tm{};
  int millis = 0;
  char zone = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3d%c", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis, &zone) != 8 ||
      zone != 'Z')
    return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm)) + millis / 1000.0;
}

void ReportJournal(const journal::Journal& journal, Metrics& metrics, WallTime now) {
  metrics.JournalFiles(FileSize(journal.path()), FileSize(journal.path() + "-wal"));
  metrics.JournalEvents(journal.stats().events_by_kind);
  const auto [seq, count] = OldestPending(journal);
  metrics.PendingIntents(count, count == 0 ? 0 : AgeOf(journal, seq, now));
  const journal::chain::Head head = journal.ChainHead();
  metrics.ChainHead(head.seq, head.hash);
}

bool ChainHeadLog::Tick(const journal::Journal& journal, MonoTime now) {
  const journal::chain::Head head = journal.ChainHead();
  if (head.hash == logged_ || (last_ && now - *last_ < every_)) return false;
  log::Info("journal chain head")
      .Str("journal", journal.path())
      .Int("seq", head.seq)
      .Str("hash", head.hash)
      .Str("head", head.ToString());
  logged_ = head.hash;
  last_ = now;
  return true;
}

}  // namespace fk::reconciler
