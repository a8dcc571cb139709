// The API server's Status objects and plain error bodies, decoded into typed
// errors (kube/api_status.h).
#include <gtest/gtest.h>

#include "kube/api_status.h"

namespace fk::kube {
namespace {

TEST(ApiStatus, DecodesStatusObjectsAndPlainBodies) {
  ApiError conflict = DecodeStatus(
      409,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","message":"modified","code":409})");
  EXPECT_EQ(conflict.kind, ApiErrorKind::kConflict);
  EXPECT_EQ(DecodeStatus(409, R"({"kind":"Status","reason":"AlreadyExists"})").kind,
            ApiErrorKind::kAlreadyExists);
  ApiError truncated = DecodeStatus(503, R"({"kind":"Sta)");
  EXPECT_EQ(truncated.kind, ApiErrorKind::kServerError);
  EXPECT_EQ(truncated.message, R"({"kind":"Sta)");
  ApiError in_watch =
      DecodeStatus(200, R"({"kind":"Status","reason":"Expired","code":410,"message":"too old"})");
  EXPECT_EQ(in_watch.kind, ApiErrorKind::kExpired);
  EXPECT_EQ(
      DecodeStatus(
          429, R"({"kind":"Status","reason":"TooManyRequests","details":{"retryAfterSeconds":7}})")
          .retry_after_seconds,
      7);
}

}  // namespace
}  // namespace fk::kube
