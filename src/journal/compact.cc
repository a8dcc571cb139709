#include "journal/compact.h"

#include <boost/json.hpp>
#include <chrono>
#include <string_view>

#include "common/clock.h"

namespace fk::journal::compact {
namespace json = boost::json;
using namespace fk::domain;

namespace {

// ---- encoding: defaults are left out --------------------------------------

void PutInt(json::object& o, const char* key, int64_t v) {
  if (v != 0) o[key] = v;
}
void PutFlag(json::object& o, const char* key, bool v) {
  if (v) o[key] = 1;
}
void PutStr(json::object& o, const char* key, const std::string& v) {
  if (!v.empty()) o[key] = v;
}
template <class T>
void PutOpt(json::object& o, const char* key, const T& v) {  // an optional, packed or not
  if (v) o[key] = *v;
}
template <class E>
void PutEnum(json::object& o, const char* key, E v) {
  PutInt(o, key, static_cast<int>(v));
}
// An admission record: 1 when it names the object observed beside it (the
// common case: no uid spelled twice), else the value itself.
void PutSame(json::object& o, const char* key, const std::optional<std::string>& v,
             const std::string& observed) {
  if (v) o[key] = *v == observed ? json::value(1) : json::value(*v);
}
void PutObject(json::object& o, const char* key, json::object v) {
  if (!v.empty()) o[key] = std::move(v);
}

json::object Policy(const PolicyObservation& p) {
  json::object o;
  PutFlag(o, "p", p.present);
  PutStr(o, "u", p.uid);
  PutInt(o, "g", p.generation);
  PutFlag(o, "i", p.intact);
  return o;
}
json::object Pod(const PodObservation& p) {
  json::object o;
  PutFlag(o, "p", p.present);
  PutStr(o, "u", p.uid);
  PutFlag(o, "s", p.scheduling_gated);
  return o;
}

// The widening policies, each [name, uid, generation, widens]; absent when
// none (every row written before schema 9, and any sandbox whose fence holds).
void PutBypass(json::object& o, const char* key, const std::vector<WideningPolicy>& bypass) {
  if (bypass.empty()) return;
  json::array a;
  for (const WideningPolicy& p : bypass)
    a.push_back(json::array{p.name, p.uid, p.generation, static_cast<int>(p.widens)});
  o[key] = std::move(a);
}

json::array DecisionArray(const Decision& d) {
  json::array a{static_cast<int>(d.verdict), static_cast<int>(d.reason),
                static_cast<int>(d.action)};
  if (!d.note.empty() || d.reevaluate_at_ms) a.emplace_back(d.note.view());
  if (d.reevaluate_at_ms) a.emplace_back(*d.reevaluate_at_ms);
  return a;
}

// The body of a `pruned` row: every field spelled (the append-only trigger
// reads "l", verify_chain.sql reads "h").
json::object PrunedObject(const Pruned& p) {
  json::object o{{"f", p.first_seq},   {"l", p.last_seq},  {"n", p.rows},     {"fa", p.first_at_ms},
                 {"la", p.last_at_ms}, {"hs", p.head_seq}, {"h", p.head_hash}};
  if (!p.archive.empty()) o["a"] = p.archive;
  return o;
}

// The body of a `writer_started` row, [writer, enforcement, [namespaces]]:
// every field spelled, as verify_chain.sql compares them with writer_starts.
json::array WriterStartedArray(const WriterStarted& w) {
  json::array namespaces;
  for (const std::string& ns : w.enforcement.dry_run_namespaces) namespaces.emplace_back(ns);
  return json::array{w.writer, w.enforcement.Mode(), std::move(namespaces)};
}

// What an intent's fields default to: in an evaluation row, the decision's
// and the observation's values; alone, the types' defaults.
struct IntentFallback {
  Reason reason = Reason::kNone;
  int64_t generation = 0;
  ApiVersion api_version = ApiVersion::kV1beta1;
  std::string note;
};
IntentFallback FallbackFor(const Snapshot* s, const Decision* d) {
  IntentFallback f;
  if (d) f.reason = d->reason, f.note = d->note.str();
  if (s) f.generation = s->sandbox.generation, f.api_version = s->sandbox.api_version;
  return f;
}

json::object IntentObject(const SuspendIntent& i, const IntentFallback& f) {
  json::object o;
  if (i.reason != f.reason) o["r"] = static_cast<int>(i.reason);
  if (i.observed_generation != f.generation) o["g"] = i.observed_generation;
  PutStr(o, "rv", i.resource_version);
  if (i.api_version != f.api_version) o["v"] = static_cast<int>(i.api_version);
  if (i.note != f.note) o["n"] = i.note;
  PutStr(o, "w", i.writer);
  return o;
}

json::value Fixed(const SuspendOutcome& o) {
  json::array a{static_cast<int>(o.outcome)};
  if (o.applied_generation || !o.detail.empty())
    a.emplace_back(o.applied_generation ? json::value(*o.applied_generation) : json::value());
  if (!o.detail.empty()) a.emplace_back(o.detail);
  return a;
}

}  // namespace

json::object Compact(const Snapshot& s, int64_t at_ms) {
  const SandboxObservation& sb = s.sandbox;
  json::object o;
  PutInt(o, "g", sb.generation);
  PutEnum(o, "v", sb.api_version);
  PutFlag(o, "x", sb.deleting);
  PutFlag(o, "s", sb.spare);
  PutFlag(o, "r", sb.should_run);
  PutFlag(o, "b", sb.bootstrapping);
  PutEnum(o, "op", sb.bootstrap_op);
  PutStr(o, "ph", sb.bootstrap_phase);
  PutOpt(o, "bs", sb.bootstrap_started_at_ms);
  PutSame(o, "fu", sb.fence_uid, s.workload_fence.uid);
  PutOpt(o, "fg", sb.fence_generation);
  PutSame(o, "wu", sb.workload_uid, s.workload_pod.uid);
  PutSame(o, "su", sb.supervisor_uid, s.supervisor_pod.uid);
  PutObject(o, "wf", Policy(s.workload_fence));
  PutObject(o, "sf", Policy(s.supervisor_fence));
  PutObject(o, "wp", Pod(s.workload_pod));
  PutObject(o, "sp", Pod(s.supervisor_pod));
  PutOpt(o, "hp", s.history.pending_intent_seq);
  PutOpt(o, "ha", s.history.applied_generation);
  PutOpt(o, "hd", s.history.dry_run_generation);
  PutBypass(o, "bp", s.bypass);
  PutFlag(o, "dr", s.dry_run);
  PutInt(o, "t", s.observed_at_ms - at_ms);
  return o;
}

json::object MergeDiff(const json::object& base, const json::object& target) {
  json::object diff;
  for (const auto& [key, value] : target) {
    const json::value* was = base.if_contains(key);
    if (was && *was == value) continue;
    if (was && was->is_object() && value.is_object()) {
      diff[key] = MergeDiff(was->get_object(), value.get_object());
    } else {
      diff[key] = value;
    }
  }
  for (const auto& [key, value] : base)
    if (!target.contains(key)) diff[key] = nullptr;
  return diff;
}

size_t EventsIn(RowKind kind) {
  switch (kind) {
    case RowKind::kEvaluated:
      return 2;
    case RowKind::kEvaluatedIntent:
      return 3;
    default:
      return 1;
  }
}

namespace {

bool Follows(const Event& a, const Event& b) {
  return b.seq == a.seq + 1 && a.ns == b.ns && a.name == b.name && a.uid == b.uid && b.ref_seq == 0;
}

RowKind SingleKind(EventKind k) {
  switch (k) {
    case EventKind::kFenceObserved:
      return RowKind::kFence;
    case EventKind::kSandboxObserved:
      return RowKind::kObserved;
    case EventKind::kDecided:
      return RowKind::kDecided;
    case EventKind::kSuspendIntent:
      return RowKind::kIntent;
    case EventKind::kSuspendOutcome:
      return RowKind::kOutcome;
    case EventKind::kLeadership:
      return RowKind::kLeadership;
    case EventKind::kForgotten:
      return RowKind::kForgotten;
    case EventKind::kPruned:
      return RowKind::kPruned;
    case EventKind::kWriterStarted:
      return RowKind::kWriterStarted;
  }
  return RowKind::kFence;
}

}  // namespace

size_t GroupAt(const std::vector<Event>& events, size_t at, RowKind* kind) {
  const auto is = [&](size_t i, EventKind k) {
    return i < events.size() && events[i].kind() == k && Follows(events[i - 1], events[i]);
  };
  if (events[at].kind() == EventKind::kSandboxObserved && is(at + 1, EventKind::kDecided)) {
    *kind = is(at + 2, EventKind::kSuspendIntent) ? RowKind::kEvaluatedIntent : RowKind::kEvaluated;
  } else {
    *kind = SingleKind(events[at].kind());
  }
  return EventsIn(*kind);
}

std::string EncodeBody(RowKind kind, const Event* first, const json::object& base, int64_t at_ms) {
  const Snapshot* snapshot = nullptr;
  const Decision* decision = nullptr;
  json::object o;
  for (size_t i = 0; i < EventsIn(kind); ++i) {
    const EventBody& body = first[i].body;
    if (const auto* s = std::get_if<SandboxObserved>(&body)) {
      snapshot = &s->snapshot;
      o["o"] = MergeDiff(base, Compact(s->snapshot, at_ms));
    } else if (const auto* d = std::get_if<Decided>(&body)) {
      decision = &d->decision;
      o["d"] = DecisionArray(d->decision);
    } else if (const auto* intent = std::get_if<SuspendIntent>(&body)) {
      o["i"] = IntentObject(*intent, FallbackFor(snapshot, decision));
    } else if (const auto* f = std::get_if<FenceObserved>(&body)) {
      return json::serialize(Policy(f->observation));
    } else if (const auto* out = std::get_if<SuspendOutcome>(&body)) {
      return json::serialize(Fixed(*out));
    } else if (const auto* l = std::get_if<Leadership>(&body)) {
      return json::serialize(json::array{l->identity, l->state});
    } else if (const auto* g = std::get_if<Forgotten>(&body)) {
      return json::serialize(g->detail.empty() ? json::array{} : json::array{g->detail});
    } else if (const auto* p = std::get_if<Pruned>(&body)) {
      return json::serialize(PrunedObject(*p));
    } else if (const auto* w = std::get_if<WriterStarted>(&body)) {
      return json::serialize(WriterStartedArray(*w));
    }
  }
  return json::serialize(o);
}

// ---- decoding: a missing field has its default; a malformed one is corruption.

namespace {

// How many codes enum E has: its values are 0, 1, ... up to the first that
// has no name (the domain's ToString says "unknown"), as journal_names lists
// them; a code at or past it is corruption.
template <class E>
int CodesOf() {
  static const int count = [] {
    int n = 0;
    while (std::string_view(ToString(static_cast<E>(n))) != "unknown") ++n;
    return n;
  }();
  return count;
}
// A PackedOptional's niche, the most negative integer, would read as absent:
// a row that holds it is malformed, not silently emptied. `what` names the
// field for the error (the first error of a row is the one reported).
PackedOptional<int64_t> PackedOrFail(const std::optional<int64_t>& v, const std::string& what,
                                     std::string* error) {
  if (v && Niche<int64_t>::IsNone(*v)) {
    if (error->empty()) *error = what + " holds no seq, generation or time";
    return std::nullopt;
  }
  return v;
}
// Widens' ToString names no value "unknown": its codes are fixed.
constexpr int kWidensCodes = static_cast<int>(Widens::kBoth) + 1;

class Fields {
 public:
  Fields(const json::value* v, std::string* error) : error_(error) {
    if (v && v->is_object())
      o_ = &v->get_object();
    else if (v && !v->is_null())
      Fail("not an object");
  }
  int64_t Int(const char* key, int64_t fallback = 0) {
    const json::value* v = o_ ? o_->if_contains(key) : nullptr;
    if (!v) return fallback;
    if (v->is_int64()) return v->get_int64();
    Fail(std::string("field '") + key + "' is not an integer");
    return fallback;
  }
  bool Flag(const char* key) { return Int(key) != 0; }
  std::optional<int64_t> OptInt(const char* key) {
    if (!o_ || !o_->contains(key)) return std::nullopt;
    return Int(key);
  }
  PackedOptional<int64_t> Packed(const char* key) {
    return PackedOrFail(OptInt(key), std::string("field '") + key + "'", error_);
  }
  std::string Str(const char* key, std::string fallback = {}) {
    const json::value* v = o_ ? o_->if_contains(key) : nullptr;
    if (!v) return fallback;
    if (v->is_string()) return std::string(v->get_string());
    Fail(std::string("field '") + key + "' is not a string");
    return fallback;
  }
  // An admission record: 1 = the uid observed beside it.
  std::optional<std::string> Same(const char* key, const std::string& observed) {
    const json::value* v = o_ ? o_->if_contains(key) : nullptr;
    if (!v) return std::nullopt;
    if (v->is_int64() && v->get_int64() == 1) return observed;
    return Str(key);
  }
  const json::value* Raw(const char* key) const { return o_ ? o_->if_contains(key) : nullptr; }
  template <class E>
  E Enum(const char* key, int count, E fallback = E{}) {
    const int64_t v = Int(key, static_cast<int>(fallback));
    if (v >= 0 && v < count) return static_cast<E>(v);
    Fail(std::string("field '") + key + "' is out of range");
    return fallback;
  }
  Fields Sub(const char* key) { return Fields(o_ ? o_->if_contains(key) : nullptr, error_); }
  void Fail(const std::string& what) {
    if (error_->empty()) *error_ = what;
  }
  std::string* error() const { return error_; }

 private:
  const json::object* o_ = nullptr;
  std::string* error_;
};

// Element `i` of a fixed record, or null.
const json::value* At(const json::value& v, size_t i) {
  const json::array* a = v.if_array();
  return a && i < a->size() ? &(*a)[i] : nullptr;
}

template <class E>
E EnumAt(const json::value* v, int count, std::string* error) {
  if (v && v->is_int64() && v->get_int64() >= 0 && v->get_int64() < count)
    return static_cast<E>(v->get_int64());
  if (error->empty()) *error = "enum out of range";
  return E{};
}
std::string StrAt(const json::value* v, std::string* error) {
  if (!v) return {};
  if (v->is_string()) return std::string(v->get_string());
  if (error->empty()) *error = "not a string";
  return {};
}
std::optional<int64_t> OptIntAt(const json::value* v, std::string* error) {
  if (!v || v->is_null()) return std::nullopt;
  if (v->is_int64()) return v->get_int64();
  if (error->empty()) *error = "not an integer";
  return std::nullopt;
}

// The widening policies of an observation: [name, uid, generation, widens] each.
std::vector<WideningPolicy> ReadBypass(const json::value* v, std::string* error) {
  std::vector<WideningPolicy> out;
  if (!v) return out;
  const json::array* a = v->if_array();
  if (!a) {
    if (error->empty()) *error = "field 'bp' is not an array";
    return out;
  }
  for (const json::value& p : *a) {
    if (!p.is_array() || p.get_array().size() != 4) {
      if (error->empty()) *error = "field 'bp' holds a policy that is not [name, uid, gen, widens]";
      return out;
    }
    const std::optional<int64_t> generation = OptIntAt(At(p, 2), error);
    if (!generation && error->empty()) *error = "field 'bp' holds a policy without a generation";
    out.push_back({StrAt(At(p, 0), error), StrAt(At(p, 1), error), generation.value_or(0),
                   EnumAt<Widens>(At(p, 3), kWidensCodes, error)});
  }
  return out;
}

PolicyObservation ReadPolicy(Fields f) {
  return {f.Flag("p"), f.Str("u"), f.Int("g"), f.Flag("i")};
}
Pruned ReadPruned(Fields f) {
  return {f.Int("f"),  f.Int("l"),  f.Int("n"), f.Int("fa"),
          f.Int("la"), f.Int("hs"), f.Str("h"), f.Str("a")};
}
WriterStarted ReadWriterStarted(const json::value& v, std::string* error) {
  WriterStarted w{StrAt(At(v, 0), error), {}};
  const std::optional<bool> everywhere = ParseDryRunEverywhere(StrAt(At(v, 1), error));
  const json::value* namespaces = At(v, 2);
  if ((!everywhere || !namespaces || !namespaces->is_array()) && error->empty())
    *error = "a writer start without its enforcement";
  w.enforcement.dry_run_everywhere = everywhere.value_or(false);
  if (!namespaces || !namespaces->is_array()) return w;
  for (const json::value& ns : namespaces->get_array())
    w.enforcement.dry_run_namespaces.insert(StrAt(&ns, error));
  return w;
}
PodObservation ReadPod(Fields f) { return {f.Flag("p"), f.Str("u"), f.Flag("s")}; }

Snapshot ReadSnapshot(Fields f, const RowContext& row) {
  Snapshot s;
  SandboxObservation& sb = s.sandbox;
  sb.ns = row.ns;
  sb.name = row.name;
  sb.uid = row.uid;
  sb.generation = f.Int("g");
  sb.api_version = f.Enum<ApiVersion>("v", CodesOf<ApiVersion>());
  sb.deleting = f.Flag("x");
  sb.spare = f.Flag("s");
  sb.should_run = f.Flag("r");
  sb.bootstrapping = f.Flag("b");
  sb.bootstrap_op = f.Enum<BootstrapOp>("op", CodesOf<BootstrapOp>());
  sb.bootstrap_phase = f.Str("ph");
  sb.bootstrap_started_at_ms = f.OptInt("bs");
  s.workload_fence = ReadPolicy(f.Sub("wf"));
  s.supervisor_fence = ReadPolicy(f.Sub("sf"));
  s.workload_pod = ReadPod(f.Sub("wp"));
  s.supervisor_pod = ReadPod(f.Sub("sp"));
  sb.fence_uid = f.Same("fu", s.workload_fence.uid);
  sb.fence_generation = f.OptInt("fg");
  sb.workload_uid = f.Same("wu", s.workload_pod.uid);
  sb.supervisor_uid = f.Same("su", s.supervisor_pod.uid);
  s.history.pending_intent_seq = f.Packed("hp");
  s.history.applied_generation = f.Packed("ha");
  s.history.dry_run_generation = f.Packed("hd");
  s.bypass = ReadBypass(f.Raw("bp"), f.error());
  s.dry_run = f.Flag("dr");
  s.observed_at_ms = row.at_ms + f.Int("t");
  return s;
}

// RFC 7396: `patch` merged into `target`.
void MergePatch(json::object& target, const json::object& patch) {
  for (const auto& [key, value] : patch) {
    if (value.is_null()) {
      target.erase(key);
    } else if (value.is_object()) {
      json::value& into = target[key];
      if (!into.is_object()) into = json::object{};
      MergePatch(into.get_object(), value.get_object());
    } else {
      target[key] = value;
    }
  }
}

Decision ReadDecision(const json::value* d, std::string* error) {
  if (!d || !d->is_array()) {
    *error = "decision is not an array";
    return {};
  }
  Decision out;
  out.verdict = EnumAt<Verdict>(At(*d, 0), CodesOf<Verdict>(), error);
  out.reason = EnumAt<Reason>(At(*d, 1), CodesOf<Reason>(), error);
  out.action = EnumAt<Action>(At(*d, 2), CodesOf<Action>(), error);
  out.note = StrAt(At(*d, 3), error);
  out.reevaluate_at_ms =
      PackedOrFail(OptIntAt(At(*d, 4), error), "the decision's re-evaluation time", error);
  return out;
}

SuspendIntent ReadIntent(Fields f, const IntentFallback& fb) {
  return {f.Enum<Reason>("r", CodesOf<Reason>(), fb.reason),
          f.Int("g", fb.generation),
          f.Str("rv"),
          f.Enum<ApiVersion>("v", CodesOf<ApiVersion>(), fb.api_version),
          f.Str("n", fb.note),
          f.Str("w")};
}

Result<json::value> Parse(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return Status::Corruption("body is not JSON: " + ec.message());
  return v;
}

// The events of an evaluation row (kinds 2, 3, 4, 8, 9).
Status ReadEvaluation(const json::object& body, const RowContext& row, std::vector<EventBody>& out,
                      std::string* error) {
  std::optional<Snapshot> snapshot;
  std::optional<Decision> decision;
  if (const json::value* diff = body.if_contains("o")) {
    if (!diff->is_object()) return Status::Corruption("observation is not an object");
    json::object full;
    if (!row.base.empty()) {
      auto base = Parse(row.base);
      if (!base.ok() || !base->is_object())
        return Status::Corruption("the subject's base observation is not a JSON object");
      full = std::move(base->get_object());
    }
    MergePatch(full, diff->get_object());
    const json::value whole(std::move(full));
    snapshot = ReadSnapshot(Fields(&whole, error), row);
    out.emplace_back(SandboxObserved{*snapshot});
  }
  if (const json::value* d = body.if_contains("d")) {
    decision = ReadDecision(d, error);
    out.emplace_back(Decided{*decision});
  }
  if (const json::value* i = body.if_contains("i")) {
    out.emplace_back(ReadIntent(Fields(i, error), FallbackFor(snapshot ? &*snapshot : nullptr,
                                                              decision ? &*decision : nullptr)));
  }
  return Status::Ok();
}

Result<std::vector<EventBody>> ReadBodies(RowKind kind, const json::value& v, const RowContext& row,
                                          std::string* error) {
  std::vector<EventBody> out;
  switch (kind) {
    case RowKind::kFence:
      out.emplace_back(FenceObserved{row.name, ReadPolicy(Fields(&v, error))});
      break;
    case RowKind::kOutcome:
      out.emplace_back(SuspendOutcome{EnumAt<Outcome>(At(v, 0), CodesOf<Outcome>(), error),
                                      OptIntAt(At(v, 1), error), StrAt(At(v, 2), error)});
      break;
    case RowKind::kLeadership:
      out.emplace_back(Leadership{StrAt(At(v, 0), error), StrAt(At(v, 1), error)});
      break;
    case RowKind::kForgotten:
      out.emplace_back(Forgotten{StrAt(At(v, 0), error)});
      break;
    case RowKind::kPruned:
      out.emplace_back(ReadPruned(Fields(&v, error)));
      break;
    case RowKind::kWriterStarted:
      out.emplace_back(ReadWriterStarted(v, error));
      break;
    default:
      if (!v.is_object()) return Status::Corruption("body is not an object");
      if (Status s = ReadEvaluation(v.get_object(), row, out, error); !s.ok()) return s;
  }
  if (out.size() != EventsIn(kind)) return Status::Corruption("body does not match its kind");
  return out;
}

}  // namespace

Result<std::vector<Event>> DecodeRow(int kind, std::string_view body, const RowContext& row) {
  if (kind < 1 || kind > static_cast<int>(RowKind::kWriterStarted))
    return Status::Corruption("unknown kind " + std::to_string(kind));
  auto v = Parse(body);
  if (!v.ok()) return v.status();
  std::string error;
  auto bodies = ReadBodies(static_cast<RowKind>(kind), *v, row, &error);
  if (!bodies.ok()) return bodies.status();
  if (!error.empty()) return Status::Corruption(error);
  std::vector<Event> events;
  for (EventBody& b : *bodies) {
    Event e;
    e.seq = row.seq + static_cast<int64_t>(events.size());
    e.recorded_at = FormatRecordedAt(row.at_ms);
    e.ns = row.ns;
    e.name = row.name;
    e.uid = row.uid;
    e.ref_seq = row.ref;
    e.body = std::move(b);
    events.push_back(std::move(e));
  }
  return events;
}

int64_t ParseRecordedAt(const std::string& text) {
  std::tm tm{};
  int millis = 0;
  if (std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &millis) < 6)
    return 0;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return int64_t{timegm(&tm)} * 1000 + millis;
}

std::string FormatRecordedAt(int64_t ms) {
  return FormatRfc3339(WallTime(std::chrono::milliseconds(ms)));
}

}  // namespace fk::journal::compact
