// An API call's result in the house style (kube/api_result.h): the code a
// failure maps to, and the ApiError it carries through copies and context.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "kube/api_result.h"

namespace fk::kube {
namespace {

TEST(ApiResult, EachKindOfFailureHasTheCodeACallerActsOn) {
  const std::vector<std::pair<ApiErrorKind, Code>> expected = {
      {ApiErrorKind::kNone, Code::kOk},
      {ApiErrorKind::kBadRequest, Code::kInvalidArgument},
      {ApiErrorKind::kInvalid, Code::kInvalidArgument},
      {ApiErrorKind::kUnauthorized, Code::kRefused},
      {ApiErrorKind::kForbidden, Code::kRefused},
      {ApiErrorKind::kNotFound, Code::kNotFound},
      {ApiErrorKind::kExpired, Code::kNotFound},
      {ApiErrorKind::kConflict, Code::kConflict},
      {ApiErrorKind::kAlreadyExists, Code::kConflict},
      {ApiErrorKind::kTooManyRequests, Code::kUnavailable},
      {ApiErrorKind::kServerError, Code::kUnavailable},
      {ApiErrorKind::kTransport, Code::kUnavailable},
      {ApiErrorKind::kDecode, Code::kCorruption},
      {ApiErrorKind::kTooLarge, Code::kRefused},
  };
  for (const auto& [kind, code] : expected) EXPECT_EQ(CodeFor(kind), code) << ToString(kind);
}

TEST(ApiResult, AFailureCarriesItsApiErrorThroughCopiesAndContext) {
  const ApiError conflict{ApiErrorKind::kConflict, 409, "Conflict", "modified", 3};
  const Status failed = ApiFailure(conflict);
  EXPECT_EQ(failed.code(), Code::kConflict);
  EXPECT_EQ(failed.message(), "Conflict (HTTP 409): modified");
  const ApiResult result = failed;
  const Status passed_up = result.status().WithContext("patching ns/a");
  EXPECT_EQ(passed_up.code(), Code::kConflict);
  EXPECT_EQ(passed_up.message(), "patching ns/a: Conflict (HTTP 409): modified");
  const ApiError read = ApiErrorOf(passed_up);
  EXPECT_EQ(read.kind, ApiErrorKind::kConflict);
  EXPECT_EQ(read.code, 409);
  EXPECT_EQ(read.reason, "Conflict");
  EXPECT_EQ(read.retry_after_seconds, 3);
  EXPECT_EQ(HttpCode(result), 409);
  // The code can be set apart from the kind: an abandoned call is no outage.
  EXPECT_EQ(ApiFailure({ApiErrorKind::kTransport, 0, "", "cancelled", {}}, Code::kCancelled).code(),
            Code::kCancelled);
}

TEST(ApiResult, AStatusFromElsewhereReadsAsAnOtherErrorAndOkAsNone) {
  const ApiError other = ApiErrorOf(Status::IOError("disk full"));
  EXPECT_EQ(other.kind, ApiErrorKind::kOther);
  EXPECT_EQ(other.code, 0);
  EXPECT_EQ(other.message, "disk full");
  EXPECT_EQ(ApiErrorOf(Status::Ok()).kind, ApiErrorKind::kNone);
  EXPECT_EQ(HttpCode(ApiReply{201, "{}"}), 201);
}

}  // namespace
}  // namespace fk::kube
