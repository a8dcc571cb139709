// kube::ParsePodJson: an accepted pod is present and names its uid.
#include "fuzz_support.h"
#include "kube/objects.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = fk::kube::ParsePodJson(fk::fuzz::AsText(data, size));
  if (parsed.ok()) {
    FUZZ_CHECK(parsed->present);
    FUZZ_CHECK(!parsed->uid.empty());
  }
  return 0;
}
