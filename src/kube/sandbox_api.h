// What fencekeeper writes to a Sandbox, typed (docs/design.md#the-suspend-patch):
// where a sandbox lives, the suspend PATCH's body, and what is read back from
// the server's answer. The reconciler decides; this file spells it in JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "domain/observation.h"
#include "kube/json.h"
#include "kube/objects.h"

namespace fk::kube {

// A sandbox's path. Names come from the cluster or, for pending intents,
// from the journal: one the API server could not have issued is an error,
// never sent.
Result<std::string> SandboxPath(domain::ApiVersion version, const std::string& ns,
                                const std::string& name);

// The conditional suspend: metadata.resourceVersion as the precondition, the
// reason, readiness and intent annotations, and the version's way of
// stopping (v1alpha1: spec.replicas 0; v1beta1: spec.operatingMode Suspended).
struct SuspendPatch {
  domain::ApiVersion api_version = domain::ApiVersion::kV1beta1;
  std::string resource_version;
  std::string reason;
  IntentMark mark;  // the journal seq and writer id the sandbox will carry
};
std::string SuspendPatchBody(const SuspendPatch& patch);

// A JSON object from an answer's body; null when the body is not one.
ObjectPtr ParseObject(std::string_view body);
// metadata.generation of the object in an answer's body (nullopt when there
// is none, or it is not an integer).
std::optional<int64_t> GenerationOf(std::string_view body);
// metadata.uid of the object in an answer's body ("" when there is none).
std::string UidOf(std::string_view body);

}  // namespace fk::kube
