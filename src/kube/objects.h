// Kubernetes objects (Sandbox, NetworkPolicy, Pod) parsed into the domain's
// observation values. This is the edge where malformed input becomes a defined
// value, following docs/design.md#sandbox-fields-and-annotations: an
// unparsable fence generation is a mismatch, a missing or odd operatingMode is Running (fail
// closed), and so on. Only an object without the identity we need (name, namespace, uid) is an
// error.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "domain/observation.h"
#include "kube/json.h"

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
inline constexpr const char* kPodNameAnnotation = "agents.x-k8s.io/pod-name";
inline constexpr const char* kSandboxIdLabel = "openshell.ai/sandbox-id";

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
  std::string workload_pod_name;    // annotation agents.x-k8s.io/pod-name, else the sandbox name
  std::string supervisor_pod_name;  // os-supervisor-<sandbox-id, lower case>; empty without an id
  std::optional<IntentMark> mark;   // the suspend intent it carries, if any
};

Result<ParsedSandbox> ParseSandbox(const boost::json::value& object, domain::ApiVersion version);
Result<ParsedSandbox> ParseSandboxJson(std::string_view json, domain::ApiVersion version);

// "42" -> 42. Anything but plain base-10 digits (sign, spaces, empty,
// overflow) -> nullopt. Numeric annotations (the fence generation, the
// bootstrap start in ms) are read this way.
std::optional<int64_t> ParseDigits(std::string_view text);
// nullopt is what decide() treats as a mismatch.
inline std::optional<int64_t> ParseFenceGeneration(std::string_view text) {
  return ParseDigits(text);
}

enum class PolicyRole { kWorkload, kSupervisor };

// An absent policy is PolicyObservation{} (present = false); pass nullptr.
Result<domain::PolicyObservation> ParsePolicy(const boost::json::value* object, PolicyRole role,
                                              int boundary_port);
Result<domain::PolicyObservation> ParsePolicyJson(std::string_view json, PolicyRole role,
                                                  int boundary_port);

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
// The role of a fence policy by its name; nullopt for any other policy.
std::optional<PolicyRole> FenceRole(std::string_view policy_name);

// ---- what the caches keep (informer transforms, kube::Cached) ---------------
// Only what decide() and the PATCH need. Identity lives once: the namespace
// and name in the cache's key, uid and resourceVersion in kube::Cached.

struct CachedSandbox final : Cached {
  std::string error;  // why it does not parse ("" = it does): reported, never decided
  // The observation with ns, name and uid left empty, the resourceVersion
  // empty, and the workload pod name empty when it is the sandbox's name.
  ParsedSandbox compact;
  // The parsed sandbox whole again, under its cache key.
  ParsedSandbox Parsed(const std::string& ns, const std::string& name) const;
  // Whether `pod` is its workload or supervisor pod (false if it does not parse).
  bool Names(const std::string& sandbox_name, const std::string& pod) const;
};
struct CachedPolicy final : Cached {
  int64_t generation = 0;
  bool intact = false;
  domain::PolicyObservation Observation() const { return {true, uid, generation, intact}; }
};
struct CachedPod final : Cached {
  bool readable = true;  // false: a pod without the identity we need, observed as absent
  bool scheduling_gated = false;
  domain::PodObservation Observation() const {
    return readable ? domain::PodObservation{true, uid, scheduling_gated}
                    : domain::PodObservation{};
  }
};

// The transforms: a sandbox that does not parse is kept with its error; a
// policy other than the two fences is dropped (null).
Result<std::shared_ptr<Cached>> CompactSandbox(const DecodedObject& object,
                                               domain::ApiVersion version);
Result<std::shared_ptr<Cached>> CompactPolicy(const DecodedObject& object, int boundary_port);
Result<std::shared_ptr<Cached>> CompactPod(const DecodedObject& object);

}  // namespace fk::kube
