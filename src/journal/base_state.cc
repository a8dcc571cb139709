#include "journal/base_state.h"

#include <SQLiteCpp/SQLiteCpp.h>

#include <boost/json.hpp>
#include <map>

#include "domain/fold.h"
#include "journal/codec.h"

namespace fk::journal {
namespace json = boost::json;
using namespace fk::domain;

namespace {

json::value Parsed(const std::string& text) { return json::parse(text); }

json::object IntentJson(const IntentRecord& r) {
  return {{"seq", r.seq},
          {"ns", r.ns},
          {"name", r.name},
          {"uid", r.uid},
          {"intent", Parsed(EncodePayload(r.intent))}};
}

json::object FenceJson(const FenceRecord& r) {
  return {{"ns", r.ns},
          {"policy", r.policy},
          {"present", r.observation.present},
          {"uid", r.observation.uid},
          {"generation", r.observation.generation},
          {"intact", r.observation.intact},
          {"seq", r.seq},
          {"updated_at", r.updated_at}};
}

json::object SandboxJson(const SandboxRecord& r) {
  json::object o{{"ns", r.ns.str()},
                 {"name", r.name.str()},
                 {"uid", r.uid.str()},
                 {"observation_seq", r.observation_seq},
                 {"decision_seq", r.decision_seq},
                 {"updated_at", r.updated_at.str()}};
  if (r.observation) o["observation"] = Parsed(EncodeSnapshot(*r.observation));
  if (r.decision) o["decision"] = Parsed(EncodeDecision(*r.decision));
  if (r.history.pending_intent_seq) o["pending_intent_seq"] = *r.history.pending_intent_seq;
  if (r.history.applied_generation) o["applied_generation"] = *r.history.applied_generation;
  if (r.history.dry_run_generation) o["dry_run_generation"] = *r.history.dry_run_generation;
  if (r.refused)
    o["refused"] = json::object{{"intent", IntentJson(r.refused->intent)},
                                {"outcome", Parsed(EncodePayload(r.refused->outcome))}};
  return o;
}

// Every record of `s` under its key, as its row's text.
std::map<std::string, std::string> Rows(const JournalState& s) {
  std::map<std::string, std::string> rows;
  for (const auto& [key, r] : s.fences)
    rows["fence:" + key.first + "/" + key.second] = json::serialize(FenceJson(r));
  for (const auto& [uid, r] : s.sandboxes)
    rows["sandbox:" + uid.str()] = json::serialize(SandboxJson(r));
  for (const auto& [seq, r] : s.pending_intents)
    rows["intent:" + std::to_string(seq)] = json::serialize(IntentJson(r));
  return rows;
}

// Decoding: the first problem wins and names the record.
struct Reader {
  const json::object& o;
  std::string* error;
  const json::value* Get(const char* k) {
    const json::value* v = o.if_contains(k);
    if (!v && error->empty()) *error = std::string("missing '") + k + "'";
    return v;
  }
  std::string Str(const char* k) {
    const json::value* v = Get(k);
    if (v && v->is_string()) return std::string(v->get_string());
    if (v && error->empty()) *error = std::string("'") + k + "' is not a string";
    return {};
  }
  int64_t Int(const char* k) {
    const json::value* v = Get(k);
    if (v && v->is_int64()) return v->get_int64();
    if (v && error->empty()) *error = std::string("'") + k + "' is not an integer";
    return 0;
  }
  bool Bool(const char* k) {
    const json::value* v = Get(k);
    if (v && v->is_bool()) return v->get_bool();
    if (v && error->empty()) *error = std::string("'") + k + "' is not a boolean";
    return false;
  }
  std::optional<int64_t> OptInt(const char* k) {
    if (!o.contains(k)) return std::nullopt;
    return Int(k);
  }
  std::string Text(const char* k) {
    const json::value* v = Get(k);
    return v ? json::serialize(*v) : std::string("null");
  }
  template <class T>
  T Decoded(const char* k, Result<T> (*decode)(std::string_view)) {
    auto r = decode(Text(k));
    if (!r.ok() && error->empty()) *error = std::string("'") + k + "': " + r.status().message();
    return r.ok() ? *r : T{};
  }
  template <class T>
  T Payload(const char* k, EventKind kind) {
    auto r = DecodePayload(kind, Text(k));
    if (!r.ok() || !std::holds_alternative<T>(*r)) {
      if (error->empty()) *error = std::string("'") + k + "' does not decode";
      return T{};
    }
    return std::get<T>(*r);
  }
};

IntentRecord ReadIntent(Reader r) {
  return {r.Int("seq"), r.Str("ns"), r.Str("name"), r.Str("uid"),
          r.Payload<SuspendIntent>("intent", EventKind::kSuspendIntent)};
}

Status ReadRecord(const std::string& key, const json::object& o, JournalState& s,
                  std::string* error) {
  Reader r{o, error};
  if (key.starts_with("fence:")) {
    FenceRecord f{r.Str("ns"),
                  r.Str("policy"),
                  {r.Bool("present"), r.Str("uid"), r.Int("generation"), r.Bool("intact")},
                  r.Int("seq"),
                  r.Str("updated_at"),
                  {}};
    if (f.observation.present) f.max_generation[f.observation.uid] = f.observation.generation;
    s.fences[{f.ns, f.policy}] = std::move(f);
  } else if (key.starts_with("sandbox:")) {
    SandboxRecord b;
    b.ns = CompactString(r.Str("ns"));
    b.name = CompactString(r.Str("name"));
    b.uid = CompactString(r.Str("uid"));
    b.observation_seq = r.Int("observation_seq");
    b.decision_seq = r.Int("decision_seq");
    b.updated_at = CompactString(r.Str("updated_at"));
    if (o.contains("observation")) {
      b.observation = std::make_shared<const Snapshot>(r.Decoded("observation", &DecodeSnapshot));
      b.observed = DigestOf(*b.observation);
    }
    if (o.contains("decision")) b.decision = r.Decoded("decision", &DecodeDecision);
    b.history = {r.OptInt("pending_intent_seq"), r.OptInt("applied_generation"),
                 r.OptInt("dry_run_generation")};
    if (const json::value* refused = o.if_contains("refused"); refused && refused->is_object()) {
      Reader rr{refused->get_object(), error};
      const json::value* intent = rr.Get("intent");
      if (intent && intent->is_object())
        b.refused =
            RefusedIntent{ReadIntent(Reader{intent->get_object(), error}),
                          rr.Payload<SuspendOutcome>("outcome", EventKind::kSuspendOutcome)};
    }
    seed_held_sandbox(b);
    const std::string uid = b.uid.str();
    CompactString key = b.uid;  // not read from `b` while `b` is moved
    s.sandboxes.insert_or_assign(std::move(key), std::move(b));
    reindex_sandbox(s, uid, std::nullopt);
  } else if (key.starts_with("intent:")) {
    IntentRecord i = ReadIntent(r);
    s.pending_intents[i.seq] = std::move(i);
  } else {
    return Status::Corruption("journal_base has a record of unknown kind '" + key + "'");
  }
  return Status::Ok();
}

}  // namespace

Result<JournalState> LoadBase(SQLite::Database& db) {
  JournalState s;
  SQLite::Statement q(db, "SELECT key, record FROM journal_base");
  while (q.executeStep()) {
    std::string key = q.getColumn(0).getString();
    std::string error;
    json::error_code ec;
    json::value v = json::parse(q.getColumn(1).getString(), ec);
    if (ec || !v.is_object()) error = "not a JSON object";
    if (error.empty()) {
      if (Status st = ReadRecord(key, v.get_object(), s, &error); !st.ok()) return st;
    }
    if (!error.empty()) return Status::Corruption("journal_base " + key.append(": ").append(error));
  }
  s.last_seq = db.execAndGet("SELECT last_pruned FROM journal_cut").getInt64();
  return s;
}

void WriteBase(SQLite::Database& db, const JournalState& before, const JournalState& after) {
  const auto was = Rows(before), now = Rows(after);
  SQLite::Statement put(db, "INSERT OR REPLACE INTO journal_base (key, record) VALUES (?, ?)");
  SQLite::Statement drop(db, "DELETE FROM journal_base WHERE key = ?");
  for (const auto& [key, text] : now) {
    if (auto it = was.find(key); it != was.end() && it->second == text) continue;
    put.reset();
    put.bind(1, key);
    put.bind(2, text);
    put.exec();
  }
  for (const auto& [key, text] : was) {
    if (now.contains(key)) continue;
    drop.reset();
    drop.bind(1, key);
    drop.exec();
  }
}

}  // namespace fk::journal
