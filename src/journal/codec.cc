#include "journal/codec.h"

#include <boost/json.hpp>

namespace fk::journal {
namespace json = boost::json;
using namespace fk::domain;

namespace {

json::value Opt(const std::optional<std::string>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}
json::value Opt(const std::optional<int64_t>& v) {
  return v ? json::value(*v) : json::value(nullptr);
}

json::object ToJson(const PolicyObservation& p) {
  return {
      {"present", p.present}, {"uid", p.uid}, {"generation", p.generation}, {"intact", p.intact}};
}
json::object ToJson(const PodObservation& p) {
  return {{"present", p.present}, {"uid", p.uid}, {"scheduling_gated", p.scheduling_gated}};
}

json::array ToJson(const std::vector<WideningPolicy>& bypass) {
  json::array a;
  for (const WideningPolicy& p : bypass)
    a.push_back(json::object{{"policy", p.name},
                             {"uid", p.uid},
                             {"generation", p.generation},
                             {"widens", ToString(p.widens)}});
  return a;
}

json::object ToJson(const Snapshot& s) {
  const auto& sb = s.sandbox;
  json::object sandbox{{"namespace", sb.ns},
                       {"name", sb.name},
                       {"uid", sb.uid},
                       {"generation", sb.generation},
                       {"api_version", ToString(sb.api_version)},
                       {"deleting", sb.deleting},
                       {"spare", sb.spare},
                       {"should_run", sb.should_run},
                       {"bootstrapping", sb.bootstrapping},
                       {"bootstrap_op", ToString(sb.bootstrap_op)},
                       {"bootstrap_phase", sb.bootstrap_phase},
                       {"bootstrap_started_at_ms", Opt(sb.bootstrap_started_at_ms)},
                       {"fence_uid", Opt(sb.fence_uid)},
                       {"fence_generation", Opt(sb.fence_generation)},
                       {"workload_uid", Opt(sb.workload_uid)},
                       {"supervisor_uid", Opt(sb.supervisor_uid)}};
  return {{"sandbox", std::move(sandbox)},
          {"workload_fence", ToJson(s.workload_fence)},
          {"supervisor_fence", ToJson(s.supervisor_fence)},
          {"workload_pod", ToJson(s.workload_pod)},
          {"supervisor_pod", ToJson(s.supervisor_pod)},
          {"history",
           {{"pending_intent_seq", Opt(s.history.pending_intent_seq)},
            {"applied_generation", Opt(s.history.applied_generation)},
            {"dry_run_generation", Opt(s.history.dry_run_generation)}}},
          {"bypass", ToJson(s.bypass)},
          {"dry_run", s.dry_run},
          {"observed_at_ms", s.observed_at_ms}};
}

json::object ToJson(const Decision& d) {
  return {{"verdict", ToString(d.verdict)},
          {"reason", ToString(d.reason)},
          {"action", ToString(d.action)},
          {"note", d.note.view()},
          {"reevaluate_at_ms", Opt(d.reevaluate_at_ms)}};
}

struct Encoder {
  json::object operator()(const FenceObserved& f) const {
    json::object o = ToJson(f.observation);
    o["policy"] = f.policy;
    return o;
  }
  json::object operator()(const SandboxObserved& o) const { return ToJson(o.snapshot); }
  json::object operator()(const Decided& d) const { return ToJson(d.decision); }
  json::object operator()(const SuspendIntent& i) const {
    return {{"action", "suspend"},
            {"reason", ToString(i.reason)},
            {"observed_generation", i.observed_generation},
            {"resource_version", i.resource_version},
            {"api_version", ToString(i.api_version)},
            {"note", i.note},
            {"writer", i.writer}};
  }
  json::object operator()(const Leadership& l) const {
    return {{"identity", l.identity}, {"state", l.state}};
  }
  json::object operator()(const Forgotten& f) const { return {{"detail", f.detail}}; }
  json::object operator()(const Pruned& p) const {
    return {{"first_seq", p.first_seq},     {"last_seq", p.last_seq},     {"rows", p.rows},
            {"first_at_ms", p.first_at_ms}, {"last_at_ms", p.last_at_ms}, {"head_seq", p.head_seq},
            {"head_hash", p.head_hash},     {"archive", p.archive}};
  }
  json::object operator()(const WriterStarted& w) const {
    json::array namespaces;
    for (const std::string& ns : w.enforcement.dry_run_namespaces) namespaces.emplace_back(ns);
    return {{"writer", w.writer},
            {"enforcement", w.enforcement.Mode()},
            {"dry_run_namespaces", std::move(namespaces)}};
  }
  json::object operator()(const SuspendOutcome& o) const {
    return {{"outcome", ToString(o.outcome)},
            {"applied_generation", Opt(o.applied_generation)},
            {"detail", o.detail}};
  }
};

// Decoding: a small reader that records the first problem instead of
// throwing, so a corrupt row yields a Corruption status naming the field.
class Reader {
 public:
  explicit Reader(const json::object* o, std::string where) : o_(o), where_(std::move(where)) {}

  const json::value* Field(const char* key) {
    const json::value* v = o_ ? o_->if_contains(key) : nullptr;
    if (!v) Fail(std::string("missing field '") + key + "'");
    return v;
  }
  std::string Str(const char* key) {
    const json::value* v = Field(key);
    if (v && v->is_string()) return std::string(v->get_string());
    if (v) Fail(std::string("field '") + key + "' is not a string");
    return {};
  }
  int64_t Int(const char* key) {
    const json::value* v = Field(key);
    if (v && v->is_int64()) return v->get_int64();
    if (v && v->is_uint64() && v->get_uint64() <= INT64_MAX)
      return static_cast<int64_t>(v->get_uint64());
    if (v) Fail(std::string("field '") + key + "' is not an integer");
    return 0;
  }
  bool Bool(const char* key) {
    const json::value* v = Field(key);
    if (v && v->is_bool()) return v->get_bool();
    if (v) Fail(std::string("field '") + key + "' is not a boolean");
    return false;
  }
  std::vector<std::string> Strs(const char* key) {
    std::vector<std::string> out;
    const json::value* v = Field(key);
    if (v && !v->is_array()) Fail(std::string("field '") + key + "' is not an array");
    if (!v || !v->is_array()) return out;
    for (const json::value& item : v->get_array()) {
      if (!item.is_string()) {
        Fail(std::string("field '") + key + "' holds a value that is not a string");
        return {};
      }
      out.emplace_back(item.get_string());
    }
    return out;
  }
  std::optional<std::string> OptStr(const char* key) {
    const json::value* v = Field(key);
    if (!v || v->is_null()) return std::nullopt;
    return Str(key);
  }
  std::optional<int64_t> OptInt(const char* key) {
    const json::value* v = Field(key);
    if (!v || v->is_null()) return std::nullopt;
    return Int(key);
  }
  // A field that a later version added: events written before it lack it, so
  // absence means `fallback`; a field that is present must still be well-formed.
  template <class T>
  T Added(const char* key, T (Reader::*read)(const char*), T fallback) {
    return o_ && o_->contains(key) ? (this->*read)(key) : std::move(fallback);
  }
  Reader Sub(const char* key) {
    const json::value* v = Field(key);
    if (v && !v->is_object()) Fail(std::string("field '") + key + "' is not an object");
    Reader r(v && v->is_object() ? &v->get_object() : nullptr, where_ + "." + key);
    r.parent_ = this;
    return r;
  }
  // The objects of an array field that a later version added (absent: none).
  template <class F>
  void AddedEach(const char* key, F read) {
    const json::value* v = o_ ? o_->if_contains(key) : nullptr;
    if (!v) return;
    if (!v->is_array()) return Fail(std::string("field '") + key + "' is not an array");
    const json::array& a = v->get_array();
    for (size_t i = 0; i < a.size(); ++i) {
      const std::string where = where_ + "." + key + "[" + std::to_string(i) + "]";
      if (!a[i].is_object()) return Record(where + ": not an object");
      Reader r(&a[i].get_object(), where);
      r.parent_ = this;
      read(r);
    }
  }
  template <class E>
  E Enum(const char* key, std::optional<E> (*parse)(const std::string&)) {
    std::string s = Str(key);
    auto e = parse(s);
    if (!e) {
      Fail(std::string("field '") + key + "' has unknown value '" + s + "'");
      return E{};
    }
    return *e;
  }
  void Fail(const std::string& msg) { Record(where_ + ": " + msg); }
  void Record(std::string located) {
    if (parent_) return parent_->Record(std::move(located));
    if (error_.empty()) error_ = std::move(located);
  }
  bool ok() const { return error_.empty(); }
  const std::string& error() const { return error_; }

 private:
  const json::object* o_;
  std::string where_;
  Reader* parent_ = nullptr;
  std::string error_;
};

PolicyObservation ReadPolicy(Reader r) {
  return {r.Bool("present"), r.Str("uid"), r.Int("generation"), r.Bool("intact")};
}
PodObservation ReadPod(Reader r) {
  return {r.Bool("present"), r.Str("uid"), r.Added("scheduling_gated", &Reader::Bool, false)};
}

Snapshot ReadSnapshot(Reader& r) {
  Snapshot s;
  Reader sb = r.Sub("sandbox");
  s.sandbox.ns = sb.Str("namespace");
  s.sandbox.name = sb.Str("name");
  s.sandbox.uid = sb.Str("uid");
  s.sandbox.generation = sb.Int("generation");
  s.sandbox.api_version = sb.Enum<ApiVersion>("api_version", &ParseApiVersion);
  s.sandbox.deleting = sb.Bool("deleting");
  s.sandbox.spare = sb.Added("spare", &Reader::Bool, false);
  s.sandbox.should_run = sb.Bool("should_run");
  s.sandbox.bootstrapping = sb.Bool("bootstrapping");
  s.sandbox.bootstrap_op = sb.Enum<BootstrapOp>("bootstrap_op", &ParseBootstrapOp);
  s.sandbox.bootstrap_phase = sb.Added("bootstrap_phase", &Reader::Str, std::string());
  s.sandbox.bootstrap_started_at_ms =
      sb.Added("bootstrap_started_at_ms", &Reader::OptInt, std::optional<int64_t>());
  s.sandbox.fence_uid = sb.OptStr("fence_uid");
  s.sandbox.fence_generation = sb.OptInt("fence_generation");
  s.sandbox.workload_uid = sb.OptStr("workload_uid");
  s.sandbox.supervisor_uid = sb.OptStr("supervisor_uid");
  s.workload_fence = ReadPolicy(r.Sub("workload_fence"));
  s.supervisor_fence = ReadPolicy(r.Sub("supervisor_fence"));
  s.workload_pod = ReadPod(r.Sub("workload_pod"));
  s.supervisor_pod = ReadPod(r.Sub("supervisor_pod"));
  Reader h = r.Sub("history");
  s.history.pending_intent_seq = h.OptInt("pending_intent_seq");
  s.history.applied_generation = h.OptInt("applied_generation");
  s.history.dry_run_generation =
      h.Added("dry_run_generation", &Reader::OptInt, std::optional<int64_t>());
  r.AddedEach("bypass", [&s](Reader& p) {
    s.bypass.push_back({p.Str("policy"), p.Str("uid"), p.Int("generation"),
                        p.Enum<Widens>("widens", &ParseWidens)});
  });
  s.observed_at_ms = r.Added("observed_at_ms", &Reader::Int, int64_t{0});
  s.dry_run = r.Added("dry_run", &Reader::Bool, false);
  return s;
}

Decision ReadDecision(Reader& r) {
  Decision d;
  d.verdict = r.Enum<Verdict>("verdict", &ParseVerdict);
  d.reason = r.Enum<Reason>("reason", &ParseReason);
  d.action = r.Enum<Action>("action", &ParseAction);
  d.note = r.Str("note");
  d.reevaluate_at_ms = r.Added("reevaluate_at_ms", &Reader::OptInt, std::optional<int64_t>());
  return d;
}

Result<json::object> ParseObject(std::string_view text) {
  boost::system::error_code ec;
  json::value v = json::parse(text, ec);
  if (ec) return Status::Corruption("payload is not JSON: " + ec.message());
  if (!v.is_object()) return Status::Corruption("payload is not a JSON object");
  return std::move(v.get_object());
}

template <class T, class F>
Result<T> Decode(std::string_view text, const char* what, F read) {
  auto obj = ParseObject(text);
  if (!obj.ok()) return obj.status();
  Reader r(&*obj, what);
  T value = read(r);
  if (!r.ok()) return Status::Corruption(r.error());
  return value;
}

}  // namespace

std::string EncodePayload(const EventBody& body) {
  return json::serialize(std::visit(Encoder{}, body));
}

std::string EncodeSnapshot(const Snapshot& s) { return json::serialize(ToJson(s)); }
std::string EncodeDecision(const Decision& d) { return json::serialize(ToJson(d)); }

Result<Snapshot> DecodeSnapshot(std::string_view text) {
  return Decode<Snapshot>(text, "snapshot", [](Reader& r) { return ReadSnapshot(r); });
}
Result<Decision> DecodeDecision(std::string_view text) {
  return Decode<Decision>(text, "decision", [](Reader& r) { return ReadDecision(r); });
}

template <class T, class F>
Result<EventBody> DecodeAs(std::string_view text, EventKind kind, F read) {
  auto v = Decode<T>(text, ToString(kind), read);
  if (!v.ok()) return v.status();
  return EventBody(std::in_place_type<T>, std::move(*v));
}

Result<EventBody> DecodePayload(EventKind kind, std::string_view text) {
  switch (kind) {
    case EventKind::kFenceObserved:
      return DecodeAs<FenceObserved>(text, kind, [](Reader& r) {
        return FenceObserved{
            r.Str("policy"),
            {r.Bool("present"), r.Str("uid"), r.Int("generation"), r.Bool("intact")}};
      });
    case EventKind::kSandboxObserved:
      return DecodeAs<SandboxObserved>(text, kind,
                                       [](Reader& r) { return SandboxObserved{ReadSnapshot(r)}; });
    case EventKind::kDecided:
      return DecodeAs<Decided>(text, kind, [](Reader& r) { return Decided{ReadDecision(r)}; });
    case EventKind::kSuspendIntent:
      return DecodeAs<SuspendIntent>(text, kind, [](Reader& r) {
        return SuspendIntent{r.Enum<Reason>("reason", &ParseReason),
                             r.Int("observed_generation"),
                             r.Str("resource_version"),
                             r.Enum<ApiVersion>("api_version", &ParseApiVersion),
                             r.Str("note"),
                             r.Added("writer", &Reader::Str, std::string())};
      });
    case EventKind::kSuspendOutcome:
      return DecodeAs<SuspendOutcome>(text, kind, [](Reader& r) {
        return SuspendOutcome{r.Enum<Outcome>("outcome", &ParseOutcome),
                              r.OptInt("applied_generation"), r.Str("detail")};
      });
    case EventKind::kLeadership:
      return DecodeAs<Leadership>(text, kind, [](Reader& r) {
        return Leadership{r.Str("identity"), r.Str("state")};
      });
    case EventKind::kForgotten:
      return DecodeAs<Forgotten>(text, kind, [](Reader& r) { return Forgotten{r.Str("detail")}; });
    case EventKind::kPruned:
      return DecodeAs<Pruned>(text, kind, [](Reader& r) {
        return Pruned{r.Int("first_seq"),   r.Int("last_seq"),   r.Int("rows"),
                      r.Int("first_at_ms"), r.Int("last_at_ms"), r.Int("head_seq"),
                      r.Str("head_hash"),   r.Str("archive")};
      });
    case EventKind::kWriterStarted:
      return DecodeAs<WriterStarted>(text, kind, [](Reader& r) {
        WriterStarted w{r.Str("writer"), {}};
        const std::string mode = r.Str("enforcement");
        const std::optional<bool> everywhere = ParseDryRunEverywhere(mode);
        if (!everywhere) r.Fail("field 'enforcement' has unknown value '" + mode + "'");
        w.enforcement.dry_run_everywhere = everywhere.value_or(false);
        for (std::string& ns : r.Strs("dry_run_namespaces"))
          w.enforcement.dry_run_namespaces.insert(std::move(ns));
        return w;
      });
  }
  return Status::Corruption("unknown event kind");
}

std::string EncodeEvent(const Event& e) {
  json::object o{{"seq", e.seq},
                 {"recorded_at", e.recorded_at},
                 {"kind", ToString(e.kind())},
                 {"namespace", e.ns},
                 {"name", e.name},
                 {"uid", e.uid},
                 {"ref_seq", e.ref_seq},
                 {"payload", std::visit(Encoder{}, e.body)}};
  return json::serialize(o);
}

}  // namespace fk::journal
