#include "domain/digest.h"

#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include "common/field_count.h"
#include "domain/decision.h"

namespace fk::domain {

// A field added to these types must be added below too, or two observations
// that differ only in it would look the same to the journal.
using fk::field_count::FieldCount;
static_assert(FieldCount<SandboxObservation>() == 16, "add the new field to WriteSandbox");
static_assert(FieldCount<PolicyObservation>() == 4, "add the new field to WritePolicy");
static_assert(FieldCount<PodObservation>() == 3, "add the new field to WritePod");
static_assert(FieldCount<SuspendHistory>() == 3, "add the new field to ObjectsDigest");
static_assert(FieldCount<Snapshot>() == 9, "add the new field to ObjectsDigest");
static_assert(FieldCount<WideningPolicy>() == 4, "add the new field to WriteBypass");

namespace {

// Every field is written with its length or presence, so two different
// observations never write the same bytes; the bytes are then hashed once.
class Bytes {
 public:
  void Int(int64_t v) { out_.append(reinterpret_cast<const char*>(&v), sizeof v); }
  void Bool(bool b) { out_.push_back(b ? '1' : '0'); }
  void Str(const std::string& s) {
    Int(static_cast<int64_t>(s.size()));
    out_.append(s);
  }
  void OptInt(const std::optional<int64_t>& v) {
    Bool(v.has_value());
    if (v) Int(*v);
  }
  void OptStr(const std::optional<std::string>& v) {
    Bool(v.has_value());
    if (v) Str(*v);
  }
  uint64_t Hash() const { return std::hash<std::string_view>{}(out_); }

 private:
  std::string out_;
};

void WriteSandbox(Bytes& b, const SandboxObservation& sb) {
  b.Str(sb.ns);
  b.Str(sb.name);
  b.Str(sb.uid);
  b.Int(sb.generation);
  b.Int(static_cast<int64_t>(sb.api_version));
  b.Bool(sb.deleting);
  b.Bool(sb.spare);
  b.Bool(sb.should_run);
  b.Bool(sb.bootstrapping);
  b.Int(static_cast<int64_t>(sb.bootstrap_op));
  b.Str(sb.bootstrap_phase);
  b.OptInt(sb.bootstrap_started_at_ms);
  b.OptStr(sb.fence_uid);
  b.OptInt(sb.fence_generation);
  b.OptStr(sb.workload_uid);
  b.OptStr(sb.supervisor_uid);
}

void WritePolicy(Bytes& b, const PolicyObservation& p) {
  b.Bool(p.present);
  b.Str(p.uid);
  b.Int(p.generation);
  b.Bool(p.intact);
}

void WritePod(Bytes& b, const PodObservation& p) {
  b.Bool(p.present);
  b.Str(p.uid);
  b.Bool(p.scheduling_gated);
}

void WriteBypass(Bytes& b, const std::vector<WideningPolicy>& bypass) {
  b.Int(static_cast<int64_t>(bypass.size()));
  for (const WideningPolicy& p : bypass) {
    b.Str(p.name);
    b.Str(p.uid);
    b.Int(p.generation);
    b.Int(static_cast<int64_t>(p.widens));
  }
}

}  // namespace

uint64_t SandboxDigest(const SandboxObservation& sb) {
  Bytes b;
  WriteSandbox(b, sb);
  return b.Hash();
}

uint64_t ObjectsDigest(const Snapshot& s) {
  Bytes b;
  WriteSandbox(b, s.sandbox);
  WritePolicy(b, s.workload_fence);
  WritePolicy(b, s.supervisor_fence);
  if (ReadsPods(s.sandbox)) {
    WritePod(b, s.workload_pod);
    WritePod(b, s.supervisor_pod);
  }
  b.OptInt(s.history.pending_intent_seq);
  b.OptInt(s.history.applied_generation);
  b.OptInt(s.history.dry_run_generation);
  WriteBypass(b, s.bypass);
  // Not s.dry_run: the mode is no object. A restart in another mode then
  // records nothing for a sandbox whose decision it does not change (every
  // healthy one); a decision it changes is recorded with its observation.

  return b.Hash();  // observed_at_ms left out, as SameObjects leaves it out
}

ObservedDigest DigestOf(const Snapshot& s) {
  ObservedDigest d;
  d.objects = ObjectsDigest(s);
  d.sandbox = SandboxDigest(s.sandbox);
  d.observed_at_ms = s.observed_at_ms;
  d.set_fence(s.sandbox.fence_generation,
              s.workload_fence.present ? std::optional(s.workload_fence.generation) : std::nullopt);
  return d;
}

}  // namespace fk::domain
