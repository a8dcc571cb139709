// The Kubernetes `Status` object (metav1.Status) that the API server returns
// for errors, and the typed error the client turns it into. Shared by the
// client (decoding) and the simulator (encoding).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fk::kube {

// What kind of failure an API call had, as a caller needs to react to it.
enum class ApiErrorKind {
  kNone,
  kBadRequest,        // 400
  kUnauthorized,      // 401
  kForbidden,         // 403
  kNotFound,          // 404
  kMethodNotAllowed,  // 405
  kAlreadyExists,     // 409 AlreadyExists
  kConflict,          // 409 Conflict: re-read and decide again
  kExpired,           // 410 Expired/Gone: relist
  kUnsupportedMedia,  // 415
  kInvalid,           // 422
  kTooManyRequests,   // 429
  kServerError,       // 5xx
  kTransport,         // no HTTP answer: connect, TLS, timeout, reset
  kDecode,            // an answer we could not understand
  kTooLarge,          // an answer whose body is over the transport's body limit
  kOther,
};

const char* ToString(ApiErrorKind k);

struct ApiError {
  ApiErrorKind kind = ApiErrorKind::kNone;
  int code = 0;        // HTTP status; 0 for transport errors
  std::string reason;  // Status.reason, e.g. "Conflict"
  std::string message;
  std::optional<int> retry_after_seconds;

  std::string ToString() const;
};

// Classifies an HTTP status (and the Status.reason, which splits 409 and 410).
ApiErrorKind KindFor(int http_status, std::string_view reason);

// Decodes a response body that should be a Status; a body that is not one
// (plain text from a proxy, for example) still yields a usable error.
ApiError DecodeStatus(int http_status, std::string_view body);

// Encodes a failure Status as JSON, as the API server does.
std::string EncodeStatus(int code, std::string_view reason, std::string_view message,
                         std::string_view details_name = {}, std::string_view details_kind = {},
                         std::string_view details_group = {});

}  // namespace fk::kube
