// Kubernetes objects (Sandbox, NetworkPolicy, Pod) parsed into the domain's
// observation values. This is the edge where malformed input becomes a defined
// value, following DESIGN §2: an unparsable fence generation is a mismatch, a
// missing or odd operatingMode is Running (fail closed), and so on. Only an
// object without the identity we need (name, namespace, uid) is an error.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"
#include "domain/observation.h"

namespace boost::json {
class value;
}

namespace fk::kube {

inline constexpr int kDefaultBoundaryPort = 5500;

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
inline constexpr const char* kPodNameAnnotation = "agents.x-k8s.io/pod-name";
inline constexpr const char* kSandboxIdLabel = "openshell.ai/sandbox-id";

// A Sandbox as the reconciler needs it: the decision input plus what it takes
// to find its pods and to PATCH it.
struct ParsedSandbox {
  domain::SandboxObservation observation;
  std::string resource_version;
  std::string workload_pod_name;    // annotation agents.x-k8s.io/pod-name, else the sandbox name
  std::string supervisor_pod_name;  // os-supervisor-<sandbox-id, lower case>; empty without an id
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

}  // namespace fk::kube
