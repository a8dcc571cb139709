#include "kube/objects.h"

#include "common/field_count.h"
#include "common/utf8.h"
#include "domain/event.h"
#include "kube/json.h"
#include "kube/json_fields.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cassert>
#include <cctype>
#include <charconv>

namespace fk::kube {
namespace json = boost::json;
using domain::ApiVersion;
using domain::BootstrapOp;

namespace {

// metadata.name/namespace/uid: without them the object cannot be addressed or
// journaled, so it is rejected (the caller logs and skips it).
Status RequireIdentity(const json::object* meta, const char* kind, bool need_namespace) {
  if (!meta) return Status::InvalidArgument(std::string(kind) + " has no metadata object");
  for (const char* key : {"name", "uid"}) {
    auto v = StringField(meta, key);
    if (!v || v->empty())
      return Status::InvalidArgument(std::string(kind) + " has no metadata." + key);
  }
  if (need_namespace) {
    auto ns = StringField(meta, "namespace");
    if (!ns || ns->empty())
      return Status::InvalidArgument(std::string(kind) + " has no metadata.namespace");
  }
  return Status::Ok();
}

// A string field as decide() and the journal may hold it: valid UTF-8, each
// invalid byte replaced by U+FFFD (docs/robustness.md#text-from-the-cluster).
std::optional<std::string> TextField(const json::object* o, std::string_view key) {
  auto v = StringField(o, key);
  if (v && !IsValidUtf8(*v)) *v = ValidUtf8(*v);
  return v;
}

// The intent a sandbox carries: its fail-closed-journal-seq (plain digits)
// and -writer annotations; no mark without a readable seq.
std::optional<IntentMark> MarkOf(const json::object* annotations) {
  const auto seq = StringField(annotations, kSeqAnnotation);
  const auto parsed = seq ? ParseDigits(*seq) : std::nullopt;
  if (!parsed) return std::nullopt;
  return IntentMark{*parsed, TextField(annotations, kWriterAnnotation).value_or("")};
}

int64_t GenerationOf(const json::object* meta) {
  const json::value* g = meta ? meta->if_contains("generation") : nullptr;
  if (g && g->is_int64()) return g->get_int64();
  if (g && g->is_uint64() && g->get_uint64() <= INT64_MAX)
    return static_cast<int64_t>(g->get_uint64());
  return 0;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// Desired mode (docs/design.md#sandbox-fields-and-annotations): suspended
// only on an explicit, well-formed value.
bool ShouldRun(const json::object* spec, ApiVersion version) {
  const json::value* v = nullptr;
  if (version == ApiVersion::kV1beta1) {
    v = spec ? spec->if_contains("operatingMode") : nullptr;
    return !(v && v->is_string() && EqualsIgnoreCase(v->get_string(), "Suspended"));
  }
  v = spec ? spec->if_contains("replicas") : nullptr;
  if (v && v->is_int64()) return v->get_int64() > 0;
  if (v && v->is_uint64()) return v->get_uint64() > 0;
  return true;
}

// OpenShell's annotation_or_label: the annotation when present (even empty),
// else the label.
std::optional<std::string> AnnotationOrLabel(const json::object* annotations,
                                             const json::object* labels, const char* key) {
  if (auto a = StringField(annotations, key)) return a;
  return StringField(labels, key);
}

// A map of string labels (metadata.labels); a value of another type is left
// out, as the API server never sends one.
LabelSet::Items LabelItems(const json::object* labels) {
  LabelSet::Items items;
  if (!labels) return items;
  for (const auto& [k, v] : *labels)
    if (v.is_string()) items.emplace_back(std::string(k), std::string(v.get_string()));
  return items;
}

// spec.podTemplate.metadata.labels, with the role OpenShell forces. Owned
// by the workload pod's name, as that pod's labels are: the two are then
// usually one interned set.
LabelSet TemplateLabels(const json::object& sandbox, const std::string& workload_pod_name) {
  const json::object* tmpl = ObjectField(ObjectField(&sandbox, "spec"), "podTemplate");
  LabelSet::Items items = LabelItems(ObjectField(ObjectField(tmpl, "metadata"), "labels"));
  items.emplace_back(kBoundaryRoleLabel, "workload");  // last: it wins over the template's
  return LabelSet::Of(std::move(items), workload_pod_name);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

std::optional<int64_t> ParseDigits(std::string_view text) {
  if (text.empty() ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return value;
}

Result<ParsedSandbox> ParseSandbox(const json::value& object, ApiVersion version) {
  if (!object.is_object()) return Status::InvalidArgument("Sandbox is not a JSON object");
  const json::object& o = object.get_object();
  const json::object* meta = ObjectField(&o, "metadata");
  if (Status s = RequireIdentity(meta, "Sandbox", true); !s.ok()) return s;
  const json::object* annotations = ObjectField(meta, "annotations");
  const json::object* labels = ObjectField(meta, "labels");

  ParsedSandbox p;
  auto& sb = p.observation;
  sb.ns = *TextField(meta, "namespace");
  sb.name = *TextField(meta, "name");
  sb.uid = *TextField(meta, "uid");
  sb.generation = GenerationOf(meta);
  sb.api_version = version;
  const json::value* deletion = meta->if_contains("deletionTimestamp");
  // Only the API server sets it, as an RFC 3339 string; anything else is not
  // read as "being deleted", which would exempt the sandbox (fail closed).
  sb.deleting = deletion && deletion->is_string() && !deletion->get_string().empty();
  sb.should_run = ShouldRun(ObjectField(&o, "spec"), version);
  sb.bootstrapping =
      StringField(annotations, kBootstrappingAnnotation) == std::optional<std::string>("true");
  if (auto op = StringField(annotations, kBootstrapOperationAnnotation)) {
    auto parsed = domain::ParseBootstrapOp(*op);
    sb.bootstrap_op = parsed && *parsed != BootstrapOp::kNone ? *parsed : BootstrapOp::kOther;
  }
  sb.fence_uid = TextField(annotations, kFenceUidAnnotation);
  if (auto g = StringField(annotations, kFenceGenerationAnnotation))
    sb.fence_generation = ParseDigits(*g);  // nullopt: what decide() treats as a mismatch
  sb.bootstrap_phase = TextField(annotations, kBootstrapPhaseAnnotation).value_or("");
  if (auto t = StringField(annotations, kBootstrapStartedAtAnnotation))
    sb.bootstrap_started_at_ms = ParseDigits(*t);
  sb.workload_uid = TextField(annotations, kWorkloadUidAnnotation);
  sb.supervisor_uid = TextField(annotations, kSupervisorUidAnnotation);

  p.resource_version = TextField(meta, "resourceVersion").value_or("");
  p.mark = MarkOf(annotations);
  p.workload_pod_name = StringField(annotations, kPodNameAnnotation).value_or(sb.name);
  if (p.workload_pod_name.empty()) p.workload_pod_name = sb.name;
  // docs/design.md#warm-pool-pairs: a claimed pair's pods keep the physical
  // pair id, while its sandbox id becomes the logical one.
  const auto sandbox_id = AnnotationOrLabel(annotations, labels, kSandboxIdLabel);
  const bool has_sandbox_id = sandbox_id && !sandbox_id->empty();
  sb.spare = StringField(labels, kWarmPoolLabel).has_value() && !has_sandbox_id;
  auto resource_id = AnnotationOrLabel(annotations, labels, kWarmPairIdKey);
  if (!resource_id || resource_id->empty()) resource_id = sandbox_id;
  if (resource_id && !resource_id->empty())
    p.supervisor_pod_name = kSupervisorPodPrefix + Lower(*resource_id);
  p.template_labels = TemplateLabels(o, p.workload_pod_name);
  return p;
}

Result<ParsedSandbox> ParseSandboxJson(std::string_view text, ApiVersion version) {
  auto v = ParseJson(text, "Sandbox");
  if (!v.ok()) return v.status();
  return ParseSandbox(**v, version);
}

Result<domain::PolicyObservation> ParsePolicy(const json::value* object, PolicyRole role,
                                              int boundary_port) {
  if (!object) return domain::PolicyObservation{};
  if (!object->is_object()) return Status::InvalidArgument("NetworkPolicy is not a JSON object");
  const json::object& o = object->get_object();
  const json::object* meta = ObjectField(&o, "metadata");
  if (Status s = RequireIdentity(meta, "NetworkPolicy", false); !s.ok()) return s;
  domain::PolicyObservation p;
  p.present = true;
  p.uid = *TextField(meta, "uid");
  p.generation = GenerationOf(meta);
  const json::value* spec = o.if_contains("spec");
  p.intact = spec && SpecIntact(*spec, role, boundary_port);
  return p;
}

Result<domain::PolicyObservation> ParsePolicyJson(std::string_view text, PolicyRole role,
                                                  int boundary_port) {
  auto v = ParseJson(text, "NetworkPolicy");
  if (!v.ok()) return v.status();
  return ParsePolicy(v->get(), role, boundary_port);
}

LabelSet PodLabels(const json::value* object) {
  if (!object) return {};
  const json::object* meta = ObjectField(*object, "metadata");
  return LabelSet::Of(LabelItems(ObjectField(meta, "labels")),
                      StringField(meta, "name").value_or(""));
}

Result<domain::PodObservation> ParsePod(const json::value* object) {
  if (!object) return domain::PodObservation{};
  if (!object->is_object()) return Status::InvalidArgument("Pod is not a JSON object");
  const json::object* meta = ObjectField(*object, "metadata");
  if (Status s = RequireIdentity(meta, "Pod", false); !s.ok()) return s;
  const json::object* spec = ObjectField(*object, "spec");
  const json::value* gates = spec ? spec->if_contains("schedulingGates") : nullptr;
  const bool gated = gates && gates->is_array() && !gates->get_array().empty();
  return domain::PodObservation{true, *TextField(meta, "uid"), gated};
}

domain::PolicyObservation ObservePolicy(const json::value* object, PolicyRole role,
                                        int boundary_port) {
  auto p = ParsePolicy(object, role, boundary_port);
  if (p.ok()) return *p;
  return domain::PolicyObservation{true, ValidUtf8(MetadataString(*object, "uid")), 0, false};
}

domain::PodObservation ObservePod(const json::value* object) {
  auto p = ParsePod(object);
  return p.ok() ? *p : domain::PodObservation{};
}

domain::NamedPolicy ObserveNamedPolicy(const json::value& object, int boundary_port) {
  const json::object* meta = ObjectField(object, "metadata");
  const json::value* spec = object.is_object() ? object.get_object().if_contains("spec") : nullptr;
  return {ValidUtf8(MetadataString(object, "name")), ValidUtf8(MetadataString(object, "uid")),
          GenerationOf(meta), ReadPolicyRules(spec, boundary_port)};
}

std::optional<PolicyRole> FenceRole(std::string_view policy_name) {
  if (policy_name == domain::kWorkloadPolicyName) return PolicyRole::kWorkload;
  if (policy_name == domain::kSupervisorPolicyName) return PolicyRole::kSupervisor;
  return std::nullopt;
}

namespace {

// An optional text kept as a CompactString and a bit of `present`.
void Pack(const std::optional<std::string>& s, uint8_t bit, CompactString& out, uint8_t& present) {
  if (!s) return;
  out = CompactString(*s);
  present |= bit;
}

std::optional<std::string> Unpack(const CompactString& s, uint8_t bit, uint8_t present) {
  if (!(present & bit)) return std::nullopt;
  return s.str();
}

// Of() and Parsed() list every field: one added to these types must be added
// there too, or the cache would drop it.
static_assert(field_count::FieldCount<domain::SandboxObservation>() == 16);
static_assert(field_count::FieldCount<ParsedSandbox>() == 6);

}  // namespace

void Cached::Delete(const Cached* cached) {
  switch (cached->kind()) {
    case Kind::kJson:
      delete static_cast<const CachedJson*>(cached);
      return;
    case Kind::kSandbox:
      delete static_cast<const CachedSandbox*>(cached);
      return;
    case Kind::kPolicy:
      delete static_cast<const CachedPolicy*>(cached);
      return;
    case Kind::kPod:
      delete static_cast<const CachedPod*>(cached);
      return;
  }
}

CachedRef<CachedSandbox> CachedSandbox::Of(const ParsedSandbox& parsed) {
  auto out = MakeCached<CachedSandbox>();
  const domain::SandboxObservation& o = parsed.observation;
  out->generation = o.generation;
  if (o.fence_generation) {
    out->fence_generation = *o.fence_generation;
    out->present |= CachedSandbox::kHasFenceGeneration;
  }
  Pack(o.fence_uid, CachedSandbox::kHasFenceUid, out->fence_uid, out->present);
  Pack(o.workload_uid, CachedSandbox::kHasWorkloadUid, out->workload_uid, out->present);
  Pack(o.supervisor_uid, CachedSandbox::kHasSupervisorUid, out->supervisor_uid, out->present);
  if (!o.bootstrap_phase.empty() || o.bootstrap_started_at_ms)
    out->bootstrap = CachedSandbox::Bootstrap{o.bootstrap_phase, o.bootstrap_started_at_ms};
  out->api_version = static_cast<uint8_t>(o.api_version);
  out->bootstrap_op = static_cast<uint8_t>(o.bootstrap_op);
  out->deleting = o.deleting;
  out->spare = o.spare;
  out->should_run = o.should_run;
  out->bootstrapping = o.bootstrapping;
  if (parsed.workload_pod_name != o.name) out->workload_pod = HeapText(parsed.workload_pod_name);
  // ParseSandbox names the supervisor pod by the sandbox id, so the id is
  // all that is kept; a name without the prefix would be lost, so it is a
  // programming error, not input.
  const std::string_view supervisor = parsed.supervisor_pod_name;
  const std::string_view prefix = kSupervisorPodPrefix;
  assert(supervisor.empty() || supervisor.starts_with(prefix));
  if (supervisor.starts_with(prefix))
    out->resource_id = CompactString(supervisor.substr(prefix.size()));
  if (parsed.mark) out->mark = *parsed.mark;
  out->template_labels = parsed.template_labels;
  return out;
}

ParsedSandbox CachedSandbox::Parsed(const std::string& ns, const std::string& name) const {
  ParsedSandbox p;
  domain::SandboxObservation& o = p.observation;
  o.ns = ns;
  o.name = name;
  o.uid = uid.str();
  o.generation = generation;
  o.api_version = static_cast<domain::ApiVersion>(api_version);
  o.deleting = deleting;
  o.spare = spare;
  o.should_run = should_run;
  o.bootstrapping = bootstrapping;
  o.bootstrap_op = static_cast<domain::BootstrapOp>(bootstrap_op);
  if (bootstrap) {
    o.bootstrap_phase = bootstrap->phase;
    o.bootstrap_started_at_ms = bootstrap->started_at_ms;
  }
  o.fence_uid = Unpack(fence_uid, kHasFenceUid, present);
  if (present & kHasFenceGeneration) o.fence_generation = fence_generation;
  o.workload_uid = Unpack(workload_uid, kHasWorkloadUid, present);
  o.supervisor_uid = Unpack(supervisor_uid, kHasSupervisorUid, present);
  p.resource_version = resource_version.str();
  p.workload_pod_name = workload_pod.empty() ? name : workload_pod.str();
  if (!resource_id.empty()) p.supervisor_pod_name = kSupervisorPodPrefix + resource_id.str();
  if (mark) p.mark = *mark;
  p.template_labels = template_labels;
  return p;
}

std::vector<std::string> CachedSandbox::Pods(const std::string& sandbox_name) const {
  if (!error.empty()) return {};
  std::vector<std::string> pods{workload_pod.empty() ? sandbox_name : workload_pod.str()};
  if (!resource_id.empty()) pods.push_back(kSupervisorPodPrefix + resource_id.str());
  return pods;
}

bool CachedSandbox::Names(const std::string& sandbox_name, const std::string& pod) const {
  if (!error.empty() || pod.empty()) return false;
  if (workload_pod.empty() ? pod == sandbox_name : workload_pod == pod) return true;
  const std::string_view prefix = kSupervisorPodPrefix;
  return !resource_id.empty() && pod.starts_with(prefix) &&
         resource_id == pod.substr(prefix.size());
}

Result<CachedRef<Cached>> CompactSandbox(const DecodedObject& object, ApiVersion version) {
  auto parsed = ParseSandbox(*object.object, version);
  if (!parsed.ok()) {
    auto out = MakeCached<CachedSandbox>();
    out->error = HeapText(parsed.status().message());
    return CachedRef<Cached>(std::move(out));
  }
  return CachedRef<Cached>(CachedSandbox::Of(*parsed));
}

Result<CachedRef<Cached>> CompactPolicy(const DecodedObject& object, int boundary_port) {
  auto out = MakeCached<CachedPolicy>();
  const auto role = FenceRole(object.name);
  const domain::PolicyObservation p =
      role ? ObservePolicy(object.object.get(), *role, boundary_port)
           : ObservePolicy(object.object.get(), PolicyRole::kWorkload, boundary_port);
  out->generation = p.generation;
  out->intact = role && p.intact;
  const json::value* spec = object.object && object.object->is_object()
                                ? object.object->get_object().if_contains("spec")
                                : nullptr;
  out->rules = ReadPolicyRules(spec, boundary_port);
  return CachedRef<Cached>(std::move(out));
}

Result<CachedRef<Cached>> CompactPod(const DecodedObject& object) {
  const auto p = ObservePod(object.object.get());
  auto out = MakeCached<CachedPod>();
  out->readable = p.present;
  out->scheduling_gated = p.scheduling_gated;
  // Only a workload's labels are ever matched; a supervisor's would cost an
  // interned set per pod (its boundary-pair label is its own) for nothing.
  if (p.present) {
    LabelSet labels = PodLabels(object.object.get());
    if (labels.Get(kBoundaryRoleLabel, object.name) != std::optional<std::string>("supervisor"))
      out->labels = std::move(labels);
  }
  return CachedRef<Cached>(std::move(out));
}

Result<domain::PodObservation> ParsePodJson(std::string_view text) {
  auto v = ParseJson(text, "Pod");
  if (!v.ok()) return v.status();
  return ParsePod(v->get());
}

}  // namespace fk::kube
