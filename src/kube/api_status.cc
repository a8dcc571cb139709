#include "kube/api_status.h"

#include <algorithm>
#include <boost/json.hpp>
#include <cstdint>
#include <limits>

#include "common/utf8.h"
#include "kube/json.h"

namespace fk::kube {
namespace json = boost::json;

const char* ToString(ApiErrorKind k) {
  switch (k) {
    case ApiErrorKind::kNone:
      return "OK";
    case ApiErrorKind::kBadRequest:
      return "BadRequest";
    case ApiErrorKind::kUnauthorized:
      return "Unauthorized";
    case ApiErrorKind::kForbidden:
      return "Forbidden";
    case ApiErrorKind::kNotFound:
      return "NotFound";
    case ApiErrorKind::kMethodNotAllowed:
      return "MethodNotAllowed";
    case ApiErrorKind::kAlreadyExists:
      return "AlreadyExists";
    case ApiErrorKind::kConflict:
      return "Conflict";
    case ApiErrorKind::kExpired:
      return "Expired";
    case ApiErrorKind::kUnsupportedMedia:
      return "UnsupportedMediaType";
    case ApiErrorKind::kInvalid:
      return "Invalid";
    case ApiErrorKind::kTooManyRequests:
      return "TooManyRequests";
    case ApiErrorKind::kServerError:
      return "ServerError";
    case ApiErrorKind::kTransport:
      return "TransportError";
    case ApiErrorKind::kDecode:
      return "DecodeError";
    case ApiErrorKind::kTooLarge:
      return "TooLarge";
    case ApiErrorKind::kOther:
      return "Error";
  }
  return "Error";
}

std::string ApiError::ToString() const {
  std::string s = kube::ToString(kind);
  if (code) s += " (HTTP " + std::to_string(code) + ")";
  if (!message.empty()) s += ": " + message;
  return s;
}

ApiErrorKind KindFor(int status, std::string_view reason) {
  if (status >= 200 && status < 300) return ApiErrorKind::kNone;
  switch (status) {
    case 400:
      return ApiErrorKind::kBadRequest;
    case 401:
      return ApiErrorKind::kUnauthorized;
    case 403:
      return ApiErrorKind::kForbidden;
    case 404:
      return ApiErrorKind::kNotFound;
    case 405:
      return ApiErrorKind::kMethodNotAllowed;
    case 409:
      return reason == "AlreadyExists" ? ApiErrorKind::kAlreadyExists : ApiErrorKind::kConflict;
    case 410:
      return ApiErrorKind::kExpired;
    case 415:
      return ApiErrorKind::kUnsupportedMedia;
    case 422:
      return ApiErrorKind::kInvalid;
    case 429:
      return ApiErrorKind::kTooManyRequests;
    default:
      break;
  }
  return status >= 500 ? ApiErrorKind::kServerError : ApiErrorKind::kOther;
}

ApiError DecodeStatus(int http_status, std::string_view body) {
  ApiError e;
  e.code = http_status;
  auto v = ParseJson(body, "Status");
  const json::object* o = v.ok() && (*v)->is_object() ? &(*v)->get_object() : nullptr;
  if (o && o->contains("kind") && o->at("kind") == "Status") {
    if (auto* r = o->if_contains("reason"); r && r->is_string()) e.reason = r->get_string();
    if (auto* m = o->if_contains("message"); m && m->is_string()) e.message = m->get_string();
    // The numbers are int64 in JSON and int here: narrowing wrapped them
    // (code 4294967706 read as 410, retryAfterSeconds 2^63-1 as -1; found by
    // fuzzing). A code that is not an HTTP status is ignored; a negative wait
    // is dropped and a huge one clamped (callers cap it further).
    if (auto* c = o->if_contains("code"); c && c->is_int64() && http_status == 200) {
      const int64_t code = c->get_int64();  // a Status inside a watch ERROR event
      if (code >= 100 && code <= 599) e.code = static_cast<int>(code);
    }
    if (auto* d = o->if_contains("details"); d && d->is_object()) {
      if (auto* ra = d->get_object().if_contains("retryAfterSeconds");
          ra && ra->is_int64() && ra->get_int64() >= 0) {
        e.retry_after_seconds =
            static_cast<int>(std::min<int64_t>(ra->get_int64(), std::numeric_limits<int>::max()));
      }
    }
  } else {
    // Not a Status (e.g. the plain-text 429 of API priority and fairness).
    e.message = std::string(Utf8Prefix(body, 200));  // never half a character
    while (!e.message.empty() && (e.message.back() == '\n' || e.message.back() == '\r'))
      e.message.pop_back();
  }
  e.kind = KindFor(e.code, e.reason);
  return e;
}

std::string EncodeStatus(int code, std::string_view reason, std::string_view message,
                         std::string_view details_name, std::string_view details_kind,
                         std::string_view details_group) {
  json::object s{{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", json::object{}},
                 {"status", "Failure"}, {"message", message}, {"reason", reason},
                 {"code", code}};
  if (!details_name.empty() || !details_kind.empty()) {
    json::object d;
    if (!details_name.empty()) d["name"] = details_name;
    if (!details_group.empty()) d["group"] = details_group;
    if (!details_kind.empty()) d["kind"] = details_kind;
    s["details"] = std::move(d);
  }
  return json::serialize(s);
}

}  // namespace fk::kube
