#include "kube/api_result.h"

#include <memory>
#include <utility>

namespace fk::kube {
namespace {

struct ApiErrorDetail final : Status::Detail {
  explicit ApiErrorDetail(ApiError e) : error(std::move(e)) {}
  ApiError error;
};

}  // namespace

Code CodeFor(ApiErrorKind kind) {
  switch (kind) {
    case ApiErrorKind::kNone:
      return Code::kOk;
    case ApiErrorKind::kBadRequest:
    case ApiErrorKind::kMethodNotAllowed:
    case ApiErrorKind::kUnsupportedMedia:
    case ApiErrorKind::kInvalid:
      return Code::kInvalidArgument;  // the request was malformed: sending it again will not do
    case ApiErrorKind::kUnauthorized:
    case ApiErrorKind::kForbidden:
      return Code::kRefused;
    case ApiErrorKind::kNotFound:
    case ApiErrorKind::kExpired:
      return Code::kNotFound;  // the object, or the resourceVersion's history, is gone
    case ApiErrorKind::kAlreadyExists:
    case ApiErrorKind::kConflict:
      return Code::kConflict;
    case ApiErrorKind::kTooManyRequests:
    case ApiErrorKind::kServerError:
    case ApiErrorKind::kTransport:
      return Code::kUnavailable;
    case ApiErrorKind::kDecode:
      return Code::kCorruption;
    case ApiErrorKind::kTooLarge:
      return Code::kRefused;  // over our own body limit: the same request is as large again
    case ApiErrorKind::kOther:
      break;
  }
  return Code::kUnavailable;
}

Status ApiFailure(ApiError error) {
  const Code code = CodeFor(error.kind);
  return ApiFailure(std::move(error), code);
}

Status ApiFailure(ApiError error, Code code) {
  std::string message = error.ToString();
  return Status::Of(code, std::move(message))
      .WithDetail(std::make_shared<ApiErrorDetail>(std::move(error)));
}

ApiError ApiErrorOf(const Status& status) {
  if (status.ok()) return {};
  if (const auto* d = dynamic_cast<const ApiErrorDetail*>(status.detail())) return d->error;
  ApiError other;
  other.kind = ApiErrorKind::kOther;
  other.message = status.message();
  return other;
}

int HttpCode(const ApiResult& result) {
  return result.ok() ? result->code : ApiErrorOf(result.status()).code;
}

}  // namespace fk::kube
