#include "cli/replay_query.h"

#include <time.h>

#include <charconv>
#include <cstdio>

#include "common/duration.h"
#include "domain/fold.h"
#include "journal/journal.h"

namespace fk::cli {
using namespace fk::domain;

namespace {

bool Digits(std::string_view s, size_t from, size_t n, int* out) {
  if (from + n > s.size()) return false;
  const auto r = std::from_chars(s.data() + from, s.data() + from + n, *out);
  return r.ec == std::errc() && r.ptr == s.data() + from + n;
}

// The fraction after the seconds, as ms; advances `pos` past it.
int FractionMs(std::string_view s, size_t& pos) {
  if (pos >= s.size() || s[pos] != '.') return 0;
  int ms = 0, scale = 100;
  for (++pos; pos < s.size() && s[pos] >= '0' && s[pos] <= '9'; ++pos, scale /= 10)
    ms += (s[pos] - '0') * scale;
  return ms;
}

// "Z", "+hh:mm" or "-hh:mm" at `pos` ending the text, as seconds east of UTC.
std::optional<int> ZoneOffset(std::string_view s, size_t pos) {
  if (s.substr(pos) == "Z" || s.substr(pos) == "z") return 0;
  int h = 0, m = 0;
  if (s.size() != pos + 6 || (s[pos] != '+' && s[pos] != '-') || s[pos + 3] != ':' ||
      !Digits(s, pos + 1, 2, &h) || !Digits(s, pos + 4, 2, &m))
    return std::nullopt;
  return (s[pos] == '-' ? -1 : 1) * (h * 3600 + m * 60);
}

std::optional<int64_t> ParseSeq(std::string_view s) {
  int64_t v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || v < 0)
    return std::nullopt;
  return v;
}

// One bound: sets the seq or the time of `window` on the `since` or `until` side.
Status ApplyBound(const std::string& flag, const std::string& text, bool since,
                  std::optional<int64_t> last_row_ms, Window& w) {
  if (auto seq = ParseSeq(text)) {
    (since ? w.from_seq : w.until_seq) = *seq;
    return Status::Ok();
  }
  std::optional<int64_t> ms = ParseTimeMs(text);
  if (!ms) {
    if (auto ago = ParseDuration(text)) ms = last_row_ms.value_or(0) - ago->count();
  }
  if (!ms) {
    return Status::InvalidArgument(flag + " takes a seq (42), an RFC 3339 time " +
                                   "(2026-12-01T10:00:00Z) or a duration before the last row " +
                                   "(15m), got '" + text + "'");
  }
  (since ? w.from_ms : w.until_ms) = *ms;
  return Status::Ok();
}

}  // namespace

std::optional<int64_t> ParseTimeMs(std::string_view s) {
  struct tm t {};
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't') ||
      s[13] != ':' || s[16] != ':' || !Digits(s, 0, 4, &t.tm_year) || !Digits(s, 5, 2, &t.tm_mon) ||
      !Digits(s, 8, 2, &t.tm_mday) || !Digits(s, 11, 2, &t.tm_hour) ||
      !Digits(s, 14, 2, &t.tm_min) || !Digits(s, 17, 2, &t.tm_sec) || t.tm_mon < 1 ||
      t.tm_mon > 12 || t.tm_mday < 1 || t.tm_mday > 31 || t.tm_hour > 23 || t.tm_min > 59 ||
      t.tm_sec > 60)
    return std::nullopt;
  size_t pos = 19;
  const int ms = FractionMs(s, pos);
  const auto offset = ZoneOffset(s, pos);
  if (!offset) return std::nullopt;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return (static_cast<int64_t>(timegm(&t)) - *offset) * 1000 + ms;
}

bool Window::Before(const Event& e) const {
  if (e.seq < from_seq) return true;
  if (from_ms == std::numeric_limits<int64_t>::min()) return false;
  const auto t = ParseTimeMs(e.recorded_at);
  return !t || *t < from_ms;
}

bool Window::After(const Event& e) const {
  if (e.seq > until_seq) return true;
  if (until_ms == std::numeric_limits<int64_t>::max()) return false;
  const auto t = ParseTimeMs(e.recorded_at);
  return t && *t > until_ms;
}

bool IsSeqBound(std::string_view text) { return ParseSeq(text).has_value(); }

Result<Window> ResolveWindow(const ReplayOptions& o, std::optional<int64_t> last_row_ms) {
  Window w;
  if (o.since) {
    if (Status s = ApplyBound("--since", *o.since, true, last_row_ms, w); !s.ok()) return s;
  }
  if (o.until) {
    if (Status s = ApplyBound("--until", *o.until, false, last_row_ms, w); !s.ok()) return s;
  }
  return w;
}

Selection::Selection(const ReplayOptions& o)
    : sandboxes_(o.sandboxes.begin(), o.sandboxes.end()),
      namespaces_(o.namespaces.begin(), o.namespaces.end()),
      fence_namespaces_(namespaces_) {
  for (const auto& sb : sandboxes_) fence_namespaces_.insert(sb.substr(0, sb.find('/')));
}

Status Selection::Validate(const ReplayOptions& o) {
  for (const auto& sb : o.sandboxes) {
    const size_t slash = sb.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == sb.size())
      return Status::InvalidArgument("--sandbox takes NAMESPACE/NAME, got '" + sb + "'");
  }
  for (const auto& ns : o.namespaces) {
    if (ns.empty() || ns.find('/') != std::string::npos)
      return Status::InvalidArgument("--namespace takes a namespace, got '" + ns + "'");
  }
  return Status::Ok();
}

bool Selection::ShowsSandbox(const std::string& ns, const std::string& name) const {
  return !filtered() || namespaces_.contains(ns) || sandboxes_.contains(ns + "/" + name);
}

bool Selection::ShowsFences(const std::string& ns) const {
  return !filtered() || fence_namespaces_.contains(ns);
}

bool Selection::Shows(const Event& e) const {
  switch (e.kind()) {
    case EventKind::kFenceObserved:
      return ShowsFences(e.ns);
    case EventKind::kLeadership:
    case EventKind::kWriterStarted:  // the enforcement of every row after it
      return true;
    default:
      return ShowsSandbox(e.ns, e.name);
  }
}

void Selection::Note(const Event& e) {
  if (!filtered() || e.kind() == EventKind::kLeadership || e.kind() == EventKind::kWriterStarted)
    return;
  if (namespaces_.contains(e.ns)) seen_.insert(e.ns);
  if (e.kind() == EventKind::kFenceObserved) return;
  const std::string subject = e.ns + "/" + e.name;
  if (sandboxes_.contains(subject))
    seen_.insert(subject);
  else if (fence_namespaces_.contains(e.ns) && known_in_namespace_.size() < 10)
    known_in_namespace_.insert(subject);
}

std::string Selection::Unmatched() const {
  std::string missing;
  for (const auto& set : {&sandboxes_, &namespaces_}) {
    for (const auto& subject : *set) {
      if (seen_.contains(subject)) continue;
      missing += std::string(missing.empty() ? "" : "; ") + "no row names " +
                 (set == &sandboxes_ ? "sandbox " : "namespace ") + subject;
    }
  }
  if (missing.empty() || known_in_namespace_.empty()) return missing;
  missing += " (the journal does know:";
  for (const auto& k : known_in_namespace_) missing += " " + k;
  return missing + ")";
}

Result<ReplayReport> ReadReplay(const journal::Journal& j, const std::string& path,
                                const Window& window, Selection& selection,
                                ReplayChecker* checker) {
  ReplayReport r;
  r.journal = path;
  r.schema_version = j.schema_version();
  bool past_until = false;  // once a row is past --until, later ones are too (the clock may step)
  // Retention removed the oldest events: start from what they fold to.
  auto base = j.BaseState();
  if (!base.ok()) return base.status();
  r.state = std::move(*base);
  auto starts = j.WriterStarts();
  if (!starts.ok()) return starts.status();
  r.writer_starts = std::move(*starts);
  Status walked = j.ForEachEvent(1, std::numeric_limits<int64_t>::max(), [&](const Event& e) {
    selection.Note(e);
    if (r.journal_rows++ == 0) r.first_time = e.recorded_at;
    r.last_time = e.recorded_at;
    if (const auto* i = std::get_if<SuspendIntent>(&e.body)) r.intent_writers[e.seq] = i->writer;
    past_until = past_until || window.After(e);
    if (past_until) return Status::Ok();
    const bool shown = !window.Before(e) && selection.Shows(e);
    if (checker) checker->Visit(r.state, e, shown);
    fold(r.state, e);
    if (shown) r.rows.push_back(e);
    return Status::Ok();
  });
  if (!walked.ok()) return walked;
  return r;
}

}  // namespace fk::cli
