// `replay --format json`: one document with the rows (whole UIDs), the state
// and the check, for other tools. Several journals: the journals (each with
// its state and check) and the rows in time order, each with "journal" (its
// label) and "writer" (the whole writer id, "" where unknown).
#include <boost/json.hpp>
#include <ostream>

#include "cli/replay_output.h"
#include "journal/codec.h"

namespace fk::cli {
namespace json = boost::json;
using namespace fk::domain;

namespace {

json::value OptJson(const std::optional<int64_t>& v) { return v ? json::value(*v) : nullptr; }

json::object SandboxJson(const std::string& uid, const SandboxRecord& r) {
  json::object sb{{"namespace", r.ns.str()}, {"name", r.name.str()}, {"uid", uid}};
  sb["verdict"] = r.decision ? json::value(ToString(r.decision->verdict)) : json::value(nullptr);
  sb["reason"] = r.decision ? json::value(ToString(r.decision->reason)) : json::value(nullptr);
  sb["pending_intent_seq"] = OptJson(r.history.pending_intent_seq);
  sb["applied_generation"] = OptJson(r.history.applied_generation);
  return sb;
}

json::object StateJson(const JournalState& s, const Selection& selection) {
  json::array fences, sandboxes;
  for (const auto& [key, f] : s.fences) {
    if (!selection.ShowsFences(f.ns)) continue;
    fences.push_back({{"namespace", f.ns},
                      {"policy", f.policy},
                      {"present", f.observation.present},
                      {"uid", f.observation.uid},
                      {"generation", f.observation.generation},
                      {"intact", f.observation.intact},
                      {"seq", f.seq}});
  }
  for (const auto& [uid, r] : s.sandboxes)
    if (selection.ShowsSandbox(r.ns.str(), r.name.str()))
      sandboxes.push_back(SandboxJson(uid.str(), r));
  return {
      {"last_seq", s.last_seq}, {"fences", std::move(fences)}, {"sandboxes", std::move(sandboxes)}};
}

json::object CheckJson(const CheckResult& check) {
  const ReplayChecker& c = *check.checker;
  json::object doc{{"ok", c.divergence_count() == 0},
                   {"integrity_check", check.integrity},
                   {"events", c.events()},
                   {"decisions_checked", c.decisions_checked()},
                   {"divergences", c.divergence_count()}};
  if (!c.divergences().empty()) {
    doc["first_divergence"] = {{"seq", c.divergences().front().seq},
                               {"what", c.divergences().front().what}};
  }
  return doc;
}

json::value EventJson(const Event& e) {
  boost::system::error_code ec;
  return json::parse(journal::EncodeEvent(e), ec);
}

}  // namespace

void PrintReplayJson(const ReplayReport& r, const Selection& selection, const CheckResult& check,
                     std::ostream& out) {
  json::array events;
  for (const auto& e : r.rows) events.push_back(EventJson(e));
  json::object doc{{"journal", r.journal},
                   {"schema_version", r.schema_version},
                   {"events", std::move(events)},
                   {"state", StateJson(r.state, selection)}};
  if (check.checker) doc["check"] = CheckJson(check);
  out << json::serialize(doc) << "\n";
}

void PrintTimelineJson(const Timeline& t, const Selection& selection, std::ostream& out) {
  json::array journals, events;
  for (const auto& j : t.journals) {
    json::object doc{{"label", j.label},
                     {"path", j.path},
                     {"schema_version", j.report.schema_version},
                     {"rows", j.report.journal_rows},
                     {"rows_shown", j.report.rows.size()},
                     {"state", StateJson(j.report.state, selection)}};
    if (j.check.checker) doc["check"] = CheckJson(j.check);
    journals.push_back(std::move(doc));
  }
  for (const auto& row : t.rows) {
    json::value e = EventJson(*row.event);
    if (auto* o = e.if_object()) {
      (*o)["journal"] = t.journals[row.journal].label;
      (*o)["writer"] = row.writer;
    }
    events.push_back(std::move(e));
  }
  out << json::serialize(
             json::object{{"journals", std::move(journals)}, {"events", std::move(events)}})
      << "\n";
}

}  // namespace fk::cli
