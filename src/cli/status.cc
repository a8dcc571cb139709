// `fencekeeper status` (docs/operations.md#resuming-a-sandbox-under-the-new-fence, step 1).
#include "cli/status.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <boost/json.hpp>
#include <map>
#include <ostream>
#include <set>
#include <vector>

#include "cli/columns.h"
#include "cli/commands.h"
#include "domain/decision.h"
#include "domain/digest.h"
#include "journal/codec.h"
#include "journal/journal.h"
#include "journal/read_only.h"

namespace fk::cli {
namespace {
namespace json = boost::json;

constexpr const char* kStatuses[] = {"suspended", "held",          "suspending",
                                     "refused",   "would-suspend", "admitting",
                                     "healthy",   "ignored",       "observed"};

// Fence rows and suspended rows are one episode: fencekeeper's intent
// (suspend) is followed by the hold of the suspended object.
bool SameEpisode(const std::string& a, const std::string& b) {
  const auto failed = [](const std::string& v) { return v == "suspend" || v == "hold"; };
  return failed(a) ? failed(b) : a == b;
}

std::optional<int64_t> Int(const SQLite::Column& c) {
  return c.isNull() ? std::nullopt : std::optional<int64_t>(c.getInt64());
}

std::vector<StatusRow> ReadState(SQLite::Database& db) {
  SQLite::Statement q(db,
                      "SELECT namespace, sandbox, sandbox_uid, COALESCE(verdict, ''), "
                      "COALESCE(reason, ''), observed_generation, applied_generation, "
                      "pending_intent_seq, updated_at FROM sandbox_state "
                      "ORDER BY namespace, sandbox, sandbox_uid");
  std::vector<StatusRow> rows;
  while (q.executeStep()) {
    StatusRow r;
    r.ns = q.getColumn(0).getString();
    r.sandbox = q.getColumn(1).getString();
    r.uid = q.getColumn(2).getString();
    r.verdict = q.getColumn(3).getString();
    r.reason = q.getColumn(4).getString();
    r.observed_generation = Int(q.getColumn(5));
    r.applied_generation = Int(q.getColumn(6));
    r.pending_intent_seq = Int(q.getColumn(7));
    r.since = q.getColumn(8).getString();  // the projection's last change, until a decision says
    rows.push_back(std::move(r));
  }
  return rows;
}

// Only the namespaces and the status asked for.
void Select(const StatusOptions& o, std::vector<StatusRow>& rows) {
  std::erase_if(rows, [&](const StatusRow& r) {
    const bool in_ns = o.namespaces.empty() || std::find(o.namespaces.begin(), o.namespaces.end(),
                                                         r.ns) != o.namespaces.end();
    return !in_ns || (o.status && StatusOf(r) != *o.status);
  });
}

// When each sandbox's current episode began: the first decision of the
// trailing run of decisions in the same episode (one pass, in seq order).
// `first`: it is also the sandbox's first decision kept; after a prune, the
// episode may have begun before it.
struct Began {
  int64_t seq = 0;
  std::string at, verdict;
  bool first = true;
};
// A sandbox as the pass has seen it so far.
struct Seen {
  Began began;            // the current episode
  uint64_t observed = 0;  // SandboxDigest of its latest observation
  uint64_t held = 0;      // ... when its latest hold began (0: never held)
  Began held_began;       // the episode that hold belonged to
};
// The design's rule for holds (domain::starts_hold_episode): the same
// sandbox object held again after a verdict that was not a hold (a cache
// that lagged, then caught up) goes on with the episode it was held in.
void Decided(Seen& s, int64_t seq, const std::string& at, const std::string& verdict) {
  Began& b = s.began;
  const bool hold_again = verdict == "hold" && b.seq != 0 && b.verdict != "hold";
  if (hold_again && s.held != 0 && s.held == s.observed && !SameEpisode(b.verdict, verdict)) {
    b = s.held_began;
  } else if (b.seq == 0 || !SameEpisode(b.verdict, verdict)) {
    b = {seq, at, verdict, b.seq == 0};
  }
  if (verdict == "hold" && (hold_again || s.held == 0)) {
    s.held = s.observed;
    s.held_began = b;
  }
  b.verdict = verdict;
}
std::map<std::string, Began> EpisodeStarts(SQLite::Database& db) {
  SQLite::Statement q(db,
                      "SELECT seq, recorded_at, uid, kind = 'decided', "
                      "CASE kind WHEN 'decided' THEN json_extract(payload, '$.verdict') "
                      "ELSE payload END FROM events "
                      "WHERE kind IN ('sandbox_observed', 'decided') ORDER BY seq");
  std::map<std::string, Seen> by_uid;
  while (q.executeStep()) {
    Seen& s = by_uid[q.getColumn(2).getString()];
    if (q.getColumn(3).getInt() == 0) {
      // An observation that does not decode (a damaged row) is no object
      // seen: it cannot join two holds.
      auto snapshot = journal::DecodeSnapshot(q.getColumn(4).getString());
      s.observed = snapshot.ok() ? domain::SandboxDigest(snapshot->sandbox) : 0;
      continue;
    }
    Decided(s, q.getColumn(0).getInt64(), q.getColumn(1).getString(), q.getColumn(4).getString());
  }
  std::map<std::string, Began> out;
  for (auto& [uid, s] : by_uid)
    if (s.began.seq != 0) out.emplace(uid, std::move(s.began));
  return out;
}

// Each sandbox's latest suspend intent and its latest outcome.
std::map<std::string, std::pair<int64_t, std::string>> LatestTransitions(SQLite::Database& db) {
  SQLite::Statement q(db, "SELECT seq, sandbox_uid, outcome FROM transitions ORDER BY seq");
  std::map<std::string, std::pair<int64_t, std::string>> by_uid;
  while (q.executeStep())
    by_uid[q.getColumn(1).getString()] = {q.getColumn(0).getInt64(), q.getColumn(2).getString()};
  return by_uid;
}

bool FenceReason(const std::string& reason) {
  using domain::Reason;
  for (Reason r : {Reason::kFenceStale, Reason::kFenceAltered, Reason::kFenceMissing})
    if (reason == domain::ToString(r)) return true;
  return false;
}

// The workload fence as observed, per namespace, in seq order.
struct FenceSeen {
  int64_t seq = 0;
  std::string what, at;
};
std::map<std::string, std::vector<FenceSeen>> FenceHistory(SQLite::Database& db) {
  SQLite::Statement q(db,
                      "SELECT seq, recorded_at, namespace, present, generation, intact "
                      "FROM fence_observations WHERE policy = ? ORDER BY seq");
  q.bind(1, domain::kWorkloadPolicyName);
  std::map<std::string, std::vector<FenceSeen>> by_ns;
  while (q.executeStep()) {
    std::string what = std::string(domain::kWorkloadPolicyName) + " ";
    if (q.getColumn(3).getInt() == 0) {
      what += "absent";
    } else {
      what +=
          "generation " + q.getColumn(4).getString() + (q.getColumn(5).getInt() ? "" : ", altered");
    }
    by_ns[q.getColumn(2).getString()].push_back(
        {q.getColumn(0).getInt64(), std::move(what), q.getColumn(1).getString()});
  }
  return by_ns;
}

// The latest list of widening policies recorded for each sandbox.
std::map<std::string, FenceSeen> Bypasses(SQLite::Database& db) {
  SQLite::Statement q(db,
                      "SELECT seq, recorded_at, sandbox_uid, policy, widens FROM fence_bypasses "
                      "ORDER BY seq, policy");
  std::map<std::string, FenceSeen> by_uid;
  while (q.executeStep()) {
    FenceSeen& f = by_uid[q.getColumn(2).getString()];
    const int64_t seq = q.getColumn(0).getInt64();
    if (f.seq != seq) f = {seq, "", q.getColumn(1).getString()};
    f.what += (f.what.empty() ? "" : "; ") + q.getColumn(3).getString() + " widens " +
              q.getColumn(4).getString();
  }
  return by_uid;
}

// Since when, the fence change (or the widening policies) each began with,
// and its latest transition.
void AddEpisodes(SQLite::Database& db, std::vector<StatusRow>& rows) {
  const auto starts = EpisodeStarts(db);
  const auto fences = FenceHistory(db);
  const auto transitions = LatestTransitions(db);
  const bool pruned = db.execAndGet("SELECT last_pruned FROM journal_cut").getInt64() > 0;
  const bool any_bypass = std::any_of(rows.begin(), rows.end(), [](const StatusRow& r) {
    return r.reason == domain::ToString(domain::Reason::kFenceBypassed);
  });
  const auto bypasses = any_bypass ? Bypasses(db) : std::map<std::string, FenceSeen>{};
  for (StatusRow& r : rows) {
    if (auto t = transitions.find(r.uid); t != transitions.end())
      std::tie(r.transition_seq, r.outcome) = t->second;
    const auto began = starts.find(r.uid);
    r.since_exact = began != starts.end() && !(pruned && began->second.first);
    if (began == starts.end()) continue;  // no decision kept: the projection's time
    r.since = began->second.at;
    r.episode_seq = began->second.seq;
    if (r.reason == domain::ToString(domain::Reason::kFenceBypassed)) {
      if (auto b = bypasses.find(r.uid); b != bypasses.end())
        std::tie(r.fence, r.fence_seen) = std::tie(b->second.what, b->second.at);
      continue;
    }
    const auto ns = fences.find(r.ns);
    if (!FenceReason(r.reason) || ns == fences.end()) continue;
    auto after = std::upper_bound(ns->second.begin(), ns->second.end(), r.episode_seq,
                                  [](int64_t seq, const FenceSeen& f) { return seq < f.seq; });
    if (after == ns->second.begin()) continue;
    --after;
    std::tie(r.fence, r.fence_seen) = std::tie(after->what, after->at);
  }
}

void PrintText(const std::vector<StatusRow>& rows, std::ostream& out) {
  std::vector<Line> lines{{"NAMESPACE", "SANDBOX", "STATUS", "REASON", "SINCE", "FENCE", "RESUME"}};
  for (const StatusRow& r : rows) {
    const std::string status = StatusOf(r);
    lines.push_back({r.ns, r.sandbox, status, r.reason.empty() ? "-" : r.reason,
                     (r.since_exact ? "" : "<=") + r.since, r.fence.empty() ? "-" : r.fence,
                     ResumeHint(r, status)});
  }
  PrintAligned(lines, out);
}

void PrintJson(const std::vector<StatusRow>& rows, std::ostream& out) {
  json::array items;
  for (const StatusRow& r : rows) {
    const std::string status = StatusOf(r);
    items.push_back(json::object{{"namespace", r.ns},
                                 {"sandbox", r.sandbox},
                                 {"uid", r.uid},
                                 {"status", status},
                                 {"verdict", r.verdict},
                                 {"reason", r.reason},
                                 {"since", r.since},
                                 {"since_exact", r.since_exact},
                                 {"fence", r.fence},
                                 {"fence_seen_at", r.fence_seen},
                                 {"resume", ResumeHint(r, status)}});
  }
  out << json::serialize(json::object{{"sandboxes", std::move(items)}}) << "\n";
}

}  // namespace

bool IsStatus(const std::string& status) {
  return std::find(std::begin(kStatuses), std::end(kStatuses), status) != std::end(kStatuses);
}

std::string StatusOf(const StatusRow& r) {
  // fencekeeper's own suspension landed on the object decided on, or later,
  // or an intent of this episode was applied (a refused intent sent again
  // lands past the generation recorded: plan.cc's OwnSuspension).
  const bool in_episode = r.episode_seq > 0 && r.transition_seq >= r.episode_seq;
  const bool applied = (r.applied_generation && r.observed_generation &&
                        *r.applied_generation >= *r.observed_generation) ||
                       (in_episode && r.outcome == "applied");
  if (r.pending_intent_seq) return "suspending";
  if (r.verdict == "suspend") {
    if (applied) return "suspended";
    if (in_episode && r.outcome == "dry-run") return "would-suspend";  // enforcement is off
    return in_episode && r.outcome == "failed" ? "refused" : "suspending";
  }
  if (r.verdict == "hold") return applied ? "suspended" : "held";
  if (r.verdict == "ignore") return "ignored";
  return r.verdict.empty() ? "observed" : r.verdict;
}

std::string ResumeHint(const StatusRow& r, const std::string& status) {
  if (status == "suspending")
    return "nothing yet: fencekeeper is suspending it" +
           (r.pending_intent_seq ? " (intent seq " + std::to_string(*r.pending_intent_seq) + ")"
                                 : std::string());
  if (status == "refused")
    return "the API server refused the suspension (intent seq " + std::to_string(r.transition_seq) +
           "): it still runs; see its transitions row and the FencekeeperTransitionsFailed runbook";
  if (status == "admitting") return "nothing: OpenShell is admitting it under the current fence";
  if (status == "would-suspend")
    return "nothing: enforcement is off in its namespace (dry-run, intent seq " +
           std::to_string(r.transition_seq) + "), so it keeps running behind this fence";
  if (status != "suspended" && status != "held") return "-";
  std::string start =
      "openshell sandbox start " + r.sandbox + " (OpenShell re-admits it under the current fence)";
  using domain::Reason;
  if (r.reason == domain::ToString(Reason::kFenceBypassed))
    return "remove or narrow the policies that widen its fence, then " + start;
  if (r.reason == domain::ToString(Reason::kFenceMissing))
    return "restore the fence policy " + std::string(domain::kWorkloadPolicyName) + ", then " +
           start;
  return start;
}

int RunStatus(const StatusOptions& o, std::ostream& out, std::ostream& err) {
  if (o.status && !IsStatus(*o.status)) {
    err << "fencekeeper status: --verdict '" << *o.status
        << "': not one of suspended, held, suspending, refused, would-suspend, admitting, healthy, "
           "ignored, observed\n";
    return kExitUnusable;
  }
  journal::OpenOptions open;
  open.read_only = true;
  // Opened once through the journal first: a foreign file, a newer schema or
  // a damaged one is refused as every command refuses it.
  if (auto j = journal::Journal::Open(o.journal, open); !j.ok()) {
    err << "fencekeeper status: " << j.status().message() << "\n";
    return kExitUnusable;
  }
  try {
    SQLite::Database db(journal::ReadOnlyUri(o.journal), SQLite::OPEN_READONLY | SQLite::OPEN_URI,
                        open.busy_timeout_ms);
    // One read transaction: every view read at one moment, whatever a live
    // writer commits meanwhile.
    SQLite::Transaction snapshot(db, SQLite::TransactionBehavior::DEFERRED);
    std::vector<StatusRow> rows = ReadState(db);
    AddEpisodes(db, rows);
    Select(o, rows);
    if (o.json) {
      PrintJson(rows, out);
    } else if (rows.empty()) {
      out << "no sandbox in the journal matches\n";
    } else {
      PrintText(rows, out);
    }
  } catch (const SQLite::Exception& e) {
    err << "fencekeeper status: " << o.journal << ": " << e.what() << "\n";
    return kExitUnusable;
  }
  return kExitOk;
}

}  // namespace fk::cli
