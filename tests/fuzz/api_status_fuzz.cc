// kube::DecodeStatus: any body, any HTTP status, yields an ApiError whose kind
// agrees with KindFor (the client branches on the kind, so it must be defined).
#include "fuzz_support.h"
#include "kube/api_status.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body = fk::fuzz::AsText(data, size);
  uint8_t selector = 0;
  if (!fk::fuzz::TakeSelector(&body, &selector)) return 0;
  // 200 is the watch ERROR event's case (the code comes from the body).
  static constexpr int kStatuses[] = {200, 400, 401, 403, 404, 409, 410, 422, 429, 500, 503, 418};
  const int status = kStatuses[selector % (sizeof kStatuses / sizeof kStatuses[0])];
  const fk::kube::ApiError e = fk::kube::DecodeStatus(status, body);
  FUZZ_CHECK(e.kind == fk::kube::KindFor(e.code, e.reason));
  // Only a watch ERROR event (decoded as 200) takes its code from the body.
  FUZZ_CHECK(status == 200 || e.code == status);
  FUZZ_CHECK(e.code >= 100 && e.code <= 599);  // an HTTP status, whatever the body says
  FUZZ_CHECK(!e.retry_after_seconds || *e.retry_after_seconds >= 0);
  (void)e.ToString();
  return 0;
}
