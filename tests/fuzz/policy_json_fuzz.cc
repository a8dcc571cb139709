// kube::ParsePolicyJson for both fence roles: an accepted policy is present
// and names its uid; the boundary port comes from the input's first byte so
// odd ports reach the intended-spec comparison too.
#include "fuzz_support.h"
#include "kube/objects.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using fk::kube::PolicyRole;
  std::string_view text = fk::fuzz::AsText(data, size);
  uint8_t selector = 0;
  if (!fk::fuzz::TakeSelector(&text, &selector)) return 0;
  const int port = selector < 128 ? fk::domain::kDefaultBoundaryPort : selector * 257;
  for (PolicyRole role : {PolicyRole::kWorkload, PolicyRole::kSupervisor}) {
    auto parsed = fk::kube::ParsePolicyJson(text, role, port);
    if (!parsed.ok()) continue;
    FUZZ_CHECK(parsed->present);
    FUZZ_CHECK(!parsed->uid.empty());
  }
  return 0;
}
