// The simulator's request handling without HTTP: one request in, one reply
// out, synchronously on the caller's thread. Discovery, the /sim/... control
// endpoints, request counting, fault injection and the resource verbs (get,
// list, create, update, delete, patch) live here; sim::Server (server.cc) adds
// sockets, TLS, authentication, the configured latency and watches, and calls
// Dispatch for everything else. Deterministic tests call HandleRequest.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "sim/simulator.h"

namespace fk::sim {

struct ApiRequest {
  std::string method;  // "GET", "POST", "PUT", "PATCH", "DELETE", as on the request line
  std::string target;  // path and query, e.g. /api/v1/namespaces/ns/pods?labelSelector=a%3Db
  std::string body;
  std::string content_type;  // the Content-Type header, parameters included
  std::string accept = {};   // the Accept header: a meta.k8s.io Table is answered as one
};

struct ApiReply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  int retry_after_seconds = 0;  // > 0: the HTTP server sends a Retry-After header
};

// Answers one non-watch request exactly as the HTTP server would after
// authentication: control endpoints, discovery (server_address, "host:port",
// goes into /api's serverAddressByClientCIDRs), then request counting, fault
// injection and the resource verbs. A watch gets 400 BadRequest without being
// counted or consuming a fault: watches stream, so only sim::Server serves them.
ApiReply HandleRequest(Simulator& sim, const ApiRequest& request,
                       const std::string& server_address);

// ---- for sim::Server, which serves watches itself -------------------------------

// A request target split into decoded path segments and query parameters.
struct Target {
  std::vector<std::string> segments;
  std::map<std::string, std::string> query;
  std::string Query(const std::string& k) const;
  bool Has(const std::string& k) const;
  // A boolean parameter as the API server reads it (apimachinery's
  // Convert_Slice_string_To_bool): absent, "0" or "false" in any case is
  // false; anything else, "True" and the empty string included, is true.
  bool Flag(const std::string& k) const;
};
Target ParseTarget(std::string_view target);

// A resource request resolved from the URL.
struct Route {
  const ResourceKind* kind = nullptr;
  std::string version;
  std::string ns;
  std::string name;
  bool status = false;
};

// A watch that has been counted and got past fault injection: serve it.
struct WatchCall {
  Target target;
  Route route;
};

// As HandleRequest, except that a watch is counted and checked for faults like
// any other verb and, if no fault answers it, comes back as a WatchCall.
std::variant<ApiReply, WatchCall> Dispatch(Simulator& sim, const ApiRequest& request,
                                           const std::string& server_address);

// A Kubernetes Status reply for a failure.
ApiReply FailureReply(int code, const std::string& reason, const std::string& message);

}  // namespace fk::sim
