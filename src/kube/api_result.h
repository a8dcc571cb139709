// What an API call returns, in the house style (common/status.h): the 2xx
// answer, or a Status whose code says what a caller does in general
// (kUnavailable: try again later; kCancelled: it was abandoned; kNotFound;
// kConflict...) and which carries the typed Kubernetes error (ApiError: kind,
// HTTP code, reason, Retry-After) for the callers that branch on it. One
// error value to check, however far up it is passed.
#pragma once

#include <string>

#include "common/status.h"
#include "kube/api_status.h"

namespace fk::kube {

struct ApiReply {
  int code = 200;  // the HTTP status, 2xx
  std::string body;
};

using ApiResult = Result<ApiReply>;

// The house code for a kind of API failure.
Code CodeFor(ApiErrorKind kind);

// `error` as a failed Status (its message ApiError::ToString()), with the
// error attached; `code` when given, else CodeFor(error.kind).
Status ApiFailure(ApiError error);
Status ApiFailure(ApiError error, Code code);

// The ApiError a Status carries: kind kNone for OK, kOther (with the
// message) for a failure that did not come from an API call.
ApiError ApiErrorOf(const Status& status);

// The HTTP status of an answer, failed or not (0: no answer).
int HttpCode(const ApiResult& result);

}  // namespace fk::kube
