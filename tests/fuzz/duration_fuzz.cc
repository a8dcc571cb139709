// ParseDuration (flags such as --resync): any text either is rejected or
// becomes a duration that is not negative; empty text is rejected.
#include <string>

#include "common/duration.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text = fk::fuzz::AsText(data, size);
  const auto d = fk::ParseDuration(text);
  if (d) {
    FUZZ_CHECK(d->count() >= 0);
    FUZZ_CHECK(!text.empty());
  }
  return 0;
}
