// kube::ParseSandboxJson, both API versions, then decide() over the result:
// an observation the parser accepts must be one decide() can take
// (docs/design.md#sandbox-fields-and-annotations:
// malformed input becomes a defined value; only a missing identity is an error).
#include <string>

#include "domain/decision.h"
#include "fuzz_support.h"
#include "kube/objects.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fk::domain::ApiVersion;
  const std::string_view text = fk::fuzz::AsText(data, size);
  for (ApiVersion version : {ApiVersion::kV1beta1, ApiVersion::kV1alpha1}) {
    auto parsed = fk::kube::ParseSandboxJson(text, version);
    if (!parsed.ok()) continue;
    const auto& sb = parsed->observation;
    FUZZ_CHECK(!sb.name.empty() && !sb.uid.empty() && !sb.ns.empty());
    FUZZ_CHECK(sb.api_version == version);
    FUZZ_CHECK(!parsed->workload_pod_name.empty());
    fk::domain::Snapshot snapshot;
    snapshot.sandbox = sb;
    snapshot.observed_at_ms = 1'700'000'000'000;
    (void)fk::domain::decide(snapshot);
  }
  return 0;
}
