// Kubernetes objects (Sandbox, NetworkPolicy, Pod) parsed into the domain's
// observation values. This is the edge where malformed input becomes a defined
// value, following docs/design.md#sandbox-fields-and-annotations: an
// unparsable fence generation is a mismatch, a missing or odd operatingMode is Running (fail
// closed), and so on. Only an object without the identity we need (name, namespace, uid) is an
// error.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/compact_string.h"
#include "common/heap_text.h"
#include "common/label_set.h"
#include "common/status.h"
#include "domain/heap_optional.h"
#include "domain/observation.h"
#include "kube/json.h"
#include "kube/network_policy.h"

namespace boost::json {
class value;
}

namespace fk::kube {

// Annotation keys read from a Sandbox.
inline constexpr const char* kAnnotationPrefix = "openshell.ai/sandbox-runtime-";
inline constexpr const char* kFenceUidAnnotation =
    "openshell.ai/sandbox-runtime-network-policy-uid";
inline constexpr const char* kFenceGenerationAnnotation =
    "openshell.ai/sandbox-runtime-network-policy-generation";
inline constexpr const char* kWorkloadUidAnnotation = "openshell.ai/sandbox-runtime-workload-uid";
inline constexpr const char* kSupervisorUidAnnotation =
    "openshell.ai/sandbox-runtime-supervisor-uid";
inline constexpr const char* kBootstrappingAnnotation =
    "openshell.ai/sandbox-runtime-bootstrapping";
inline constexpr const char* kBootstrapOperationAnnotation =
    "openshell.ai/sandbox-runtime-bootstrap-operation";
inline constexpr const char* kBootstrapPhaseAnnotation =
    "openshell.ai/sandbox-runtime-bootstrap-phase";
inline constexpr const char* kBootstrapStartedAtAnnotation =
    "openshell.ai/sandbox-runtime-bootstrap-started-at-ms";
// The intent a suspend PATCH leaves on a sandbox (docs/design.md#the-suspend-patch).
inline constexpr const char* kSeqAnnotation = "openshell.ai/fail-closed-journal-seq";
inline constexpr const char* kWriterAnnotation = "openshell.ai/fail-closed-journal-writer";
// What else the suspend PATCH writes: why, and that the sandbox is unavailable.
inline constexpr const char* kReasonAnnotation = "openshell.ai/fail-closed-reason";
inline constexpr const char* kReadinessAnnotation = "openshell.ai/sandbox-runtime-readiness";
inline constexpr const char* kPodNameAnnotation = "agents.x-k8s.io/pod-name";
// The logical sandbox id and, for a warm-pool pair, the physical pair id its
// pods are named by; each read from the annotation, else the label.
inline constexpr const char* kSandboxIdLabel = "openshell.ai/sandbox-id";
inline constexpr const char* kWarmPairIdKey = "openshell.ai/warm-pair-id";
// The label of a warm-pool pair; one without a sandbox id is a spare.
inline constexpr const char* kWarmPoolLabel = "openshell.ai/warm-pool";
// A sandbox's supervisor pod is this and its resource id, lower case.
inline constexpr const char* kSupervisorPodPrefix = "os-supervisor-";
// The label OpenShell forces on every workload pod (and its template).
inline constexpr const char* kBoundaryRoleLabel = "openshell.ai/boundary-role";

// The intent an object carries: its fail-closed-journal-seq and -writer
// annotations. A seq is unique only inside one journal, so an object carries
// one of our intents only if both equal that intent's (an absent writer
// annotation reads as "", the writer of intents journaled before writer ids).
struct IntentMark {
  int64_t seq = 0;
  std::string writer;
  bool operator==(const IntentMark&) const = default;
};

// A Sandbox as the reconciler needs it: the decision input plus what it takes
// to find its pods and to PATCH it.
struct ParsedSandbox {
  domain::SandboxObservation observation;
  std::string resource_version;
  std::string workload_pod_name;  // annotation agents.x-k8s.io/pod-name, else the sandbox name
  // os-supervisor-<resource id, lower case>; empty without an id. The
  // resource id is the warm-pool pair id when there is one, else the sandbox id.
  std::string supervisor_pod_name;
  std::optional<IntentMark> mark;  // the suspend intent it carries, if any
  // The workload's labels while its pod is absent: the pod template's, with
  // openshell.ai/boundary-role=workload, which OpenShell forces on the pod.
  LabelSet template_labels;
};

Result<ParsedSandbox> ParseSandbox(const boost::json::value& object, domain::ApiVersion version);
Result<ParsedSandbox> ParseSandboxJson(std::string_view json, domain::ApiVersion version);

// "42" -> 42. Anything but plain base-10 digits (sign, spaces, empty,
// overflow) -> nullopt. Numeric annotations (the fence generation, the
// bootstrap start in ms) are read this way.
std::optional<int64_t> ParseDigits(std::string_view text);

// An absent policy is PolicyObservation{} (present = false); pass nullptr.
Result<domain::PolicyObservation> ParsePolicy(const boost::json::value* object, PolicyRole role,
                                              int boundary_port);
Result<domain::PolicyObservation> ParsePolicyJson(std::string_view json, PolicyRole role,
                                                  int boundary_port);

// A pod's labels (an empty set for anything unreadable).
LabelSet PodLabels(const boost::json::value* object);

// A present pod's UID, and whether spec.schedulingGates is a non-empty list
// (anything else, a malformed value included, counts as not gated: gated is
// what lets row 1a wait instead of suspending).
Result<domain::PodObservation> ParsePod(const boost::json::value* object);
Result<domain::PodObservation> ParsePodJson(std::string_view json);

// A policy as observed, whatever its body: absent (nullptr) is not present,
// one that does not parse is present but not intact (fail closed).
domain::PolicyObservation ObservePolicy(const boost::json::value* object, PolicyRole role,
                                        int boundary_port);
// A pod as observed: one that does not parse counts as absent.
domain::PodObservation ObservePod(const boost::json::value* object);
// Any NetworkPolicy as the effective fence reads it (identity from its metadata).
domain::NamedPolicy ObserveNamedPolicy(const boost::json::value& object, int boundary_port);
// The role of a fence policy by its name; nullopt for any other policy.
std::optional<PolicyRole> FenceRole(std::string_view policy_name);

// ---- what the caches keep (informer transforms, kube::Cached) ---------------
// Only what decide() and the PATCH need. Identity lives once: the namespace
// and name in the cache's key, uid and resourceVersion in kube::Cached.

struct CachedSandbox final : Cached {
  static constexpr Kind kKind = Kind::kSandbox;
  CachedSandbox() : Cached(kKind) {}
  // What the transform keeps of a sandbox that parsed: `parsed` without its
  // identity (the cache key and kube::Cached hold that) or resourceVersion.
  static CachedRef<CachedSandbox> Of(const ParsedSandbox& parsed);

  // The parsed sandbox whole again, under its cache key.
  ParsedSandbox Parsed(const std::string& ns, const std::string& name) const;
  // The pods it names: its workload pod, and its supervisor pod if it has a
  // sandbox id (none when it does not parse).
  std::vector<std::string> Pods(const std::string& sandbox_name) const;
  // Whether `pod` is its workload or supervisor pod (false if it does not parse).
  bool Names(const std::string& sandbox_name, const std::string& pod) const;

  // SandboxObservation's fields but the identity, packed, as it is kept for
  // every sandbox (a ParsedSandbox, 568 bytes and four heap uids, would be
  // 7 MB at 10,000). 200 bytes, a 208-byte heap chunk: the
  // optional texts and numbers say they are present in one byte of bits,
  // where each std::optional would take 8 more, the enums take a byte each, and
  // what only a sandbox OpenShell is admitting has (its bootstrap phase and
  // start) shares one pointer. In this order for the padding: the bools
  // fill the bytes after kube::Cached's count and kind, the texts
  // (alignment 1) follow, then the bytes, then what is 8-aligned.
  bool deleting = false, should_run = true, bootstrapping = false;

  // fence_uid, workload_uid, supervisor_uid: read only when their bit
  // (kHasFenceUid ...) is set in `present`; Of() and Parsed() keep them.
  CompactString fence_uid, workload_uid, supervisor_uid;
  // The resource id, lower case, that names the supervisor pod ("" = none).
  CompactString resource_id;
  enum Present : uint8_t {
    kHasFenceUid = 1,
    kHasWorkloadUid = 2,
    kHasSupervisorUid = 4,
    kHasFenceGeneration = 8,
  };
  uint8_t present = 0;
  uint8_t api_version = 0;   // a domain::ApiVersion
  uint8_t bootstrap_op = 0;  // a domain::BootstrapOp
  bool spare = false;        // an unassigned warm-pool pair (row 1b)

  HeapText error;  // why it does not parse ("" = it does): reported, never decided

  int64_t generation = 0;
  int64_t fence_generation = 0;  // read only with kHasFenceGeneration
  // Only while OpenShell admits it: the phase and start it annotated.
  struct Bootstrap {
    std::string phase;
    std::optional<int64_t> started_at_ms;
    bool operator==(const Bootstrap&) const = default;
  };
  domain::HeapOptional<Bootstrap> bootstrap;
  // The workload pod's name when it is not the sandbox's.
  HeapText workload_pod;
  LabelSet template_labels;               // interned: usually the same set as its pod's
  domain::HeapOptional<IntentMark> mark;  // rare: only while an intent is on it
};
// Any NetworkPolicy of a watched namespace: what the effective fence reads
// of it, and for the two fence policies whether they are intact. A few a
// namespace, not a sandbox.
struct CachedPolicy final : Cached {
  static constexpr Kind kKind = Kind::kPolicy;
  CachedPolicy() : Cached(kKind) {}
  int64_t generation = 0;
  bool intact = false;  // a fence policy's spec is the intended one
  domain::NetworkPolicyRules rules;
  domain::PolicyObservation Observation() const { return {true, uid.str(), generation, intact}; }
};
// 48 bytes, its two bools in kube::Cached's padding: a 64-byte heap chunk,
// two a sandbox.
struct CachedPod final : Cached {
  static constexpr Kind kKind = Kind::kPod;
  CachedPod() : Cached(kKind) {}
  bool readable = true;  // false: a pod without the identity we need, observed as absent
  bool scheduling_gated = false;
  LabelSet labels;  // interned: what NetworkPolicies select it by
  domain::PodObservation Observation() const {
    return readable ? domain::PodObservation{true, uid.str(), scheduling_gated}
                    : domain::PodObservation{};
  }
};

// The transforms: a sandbox that does not parse is kept with its error;
// every policy is kept (the effective fence reads them all).
Result<CachedRef<Cached>> CompactSandbox(const DecodedObject& object, domain::ApiVersion version);
Result<CachedRef<Cached>> CompactPolicy(const DecodedObject& object, int boundary_port);
Result<CachedRef<Cached>> CompactPod(const DecodedObject& object);

}  // namespace fk::kube
