#include "reconciler/journal_metrics.h"

#include <cstdio>
#include <ctime>
#include <filesystem>

#include "common/log.h"
#include "domain/decision.h"

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
  // A read error leaves `recorded` empty: the age gauge reads 0 until the
  // next scrape, and the journal's own failures are reported elsewhere.
  (void)journal.ForEachEvent(seq, seq, [&](const domain::Event& e) {
    recorded = ParseJournalTime(e.recorded_at);
    return Status::Ok();
  });
  if (!recorded) return 0;
  const double now_s = std::chrono::duration<double>(now.time_since_epoch()).count();
  return std::max(0.0, now_s - *recorded);
}

}  // namespace

namespace {
std::string Megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}
}  // namespace

journal::SpaceStatus VolumeWatch::Tick(journal::Journal& journal) {
  const journal::SpaceStatus s = journal.CheckSpace();
  std::lock_guard lock(mu_);
  last_ = s;
  if (s.shedding && !said_shedding_) {
    log::Warn("journal volume short of space: shedding observations, keeping intents and outcomes")
        .Str("journal", journal.path())
        .Int("free_bytes", s.volume.free_bytes)
        .Int("size_bytes", s.volume.size_bytes)
        .Str("reserve", s.reserve_held ? "held" : "given up")
        .Str("effect",
             "fail-closed suspensions go on; healthy sandboxes' changes are not "
             "journaled until space returns");
  } else if (!s.shedding && said_shedding_) {
    log::Info("journal volume has room again: the reserve is back, every change is journaled")
        .Str("journal", journal.path())
        .Int("free_bytes", s.volume.free_bytes);
  }
  said_shedding_ = s.shedding;
  return s;
}

std::string VolumeWatch::Summary() const {
  std::lock_guard lock(mu_);
  if (!last_.known) return "";
  std::string text =
      Megabytes(last_.volume.free_bytes) + " free of " + Megabytes(last_.volume.size_bytes);
  if (last_.shedding)
    text += "; short of space: shedding observations, keeping intents and outcomes (reserve " +
            std::string(last_.reserve_held ? "held" : "given up") + ")";
  return text;
}

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
  metrics.ChainSeq(journal.ChainHead().seq);
}

std::map<std::string, int> VerdictCounts(const journal::Journal& journal) {
  return journal.Read([](const domain::JournalState& s) {
    std::map<std::string, int> counts;
    for (const auto& [uid, r] : s.sandboxes)
      if (r.decision) ++counts[domain::ToString(r.decision->verdict)];
    return counts;
  });
}

std::map<std::string, int> BypassedCounts(const journal::Journal& journal) {
  return journal.Read([](const domain::JournalState& s) {
    std::map<std::string, int> counts;
    for (const auto& [uid, r] : s.sandboxes)
      if (r.decision && r.decision->reason == domain::Reason::kFenceBypassed) ++counts[r.ns.str()];
    return counts;
  });
}

std::map<std::string, int> WouldSuspendCounts(const journal::Journal& journal) {
  return journal.Read([](const domain::JournalState& s) {
    std::map<std::string, int> counts;
    for (const auto& [uid, r] : s.sandboxes) {
      const domain::SuspendHistory& h = r.history;
      // A suspend verdict is a sandbox meant to run; a dry-run intent and no
      // real suspend since (pending, or applied at or past it) is one still running.
      const bool dry_run = h.dry_run_generation && !h.pending_intent_seq &&
                           (!h.applied_generation || *h.applied_generation < *h.dry_run_generation);
      if (r.decision && r.decision->verdict == domain::Verdict::kSuspend && dry_run)
        ++counts[r.ns.str()];
    }
    return counts;
  });
}

void ReportVerdicts(const journal::Journal& journal, Metrics& metrics) {
  metrics.SandboxesByVerdict(VerdictCounts(journal));
  metrics.BypassedSandboxes(BypassedCounts(journal));
  metrics.WouldSuspendSandboxes(WouldSuspendCounts(journal));
}

bool ChainHeadLog::Tick(const journal::Journal& journal, MonoTime now, Metrics* metrics) {
  const journal::chain::Head head = journal.ChainHead();
  if (head.hash == logged_ || (last_ && now - *last_ < every_)) return false;
  log::Info("journal chain head")
      .Str("journal", journal.path())
      .Int("seq", head.seq)
      .Str("hash", head.hash)
      .Str("head", head.ToString());
  if (metrics) metrics->ChainHead(head.seq, head.hash);
  logged_ = head.hash;
  last_ = now;
  return true;
}

}  // namespace fk::reconciler
