// JSON merge patch (RFC 7386) and JSON patch (RFC 6902) as the API server
// applies them. Pure functions over Boost.JSON values.
#pragma once

#include <boost/json/value.hpp>
#include <optional>
#include <string>

namespace fk::sim {

// RFC 7386: objects merge recursively, null removes, everything else replaces.
boost::json::value MergePatch(boost::json::value target, const boost::json::value& patch);

struct JsonPatchError {
  int http_status = 0;  // 400: the patch itself is malformed; 422: it does not apply
  std::string message;
};

// RFC 6902: applies `ops` to `doc` in place. Returns the error when an op is
// malformed or does not apply (including a failed `test`); the document is
// then unspecified, so callers pass a copy.
std::optional<JsonPatchError> ApplyJsonPatch(boost::json::value& doc,
                                             const boost::json::value& ops);

}  // namespace fk::sim
