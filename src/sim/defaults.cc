#include "sim/defaults.h"

#include <boost/json.hpp>

namespace fk::sim {
namespace json = boost::json;

namespace {

bool NonEmptyList(const json::object& o, const char* key) {
  const json::value* v = o.if_contains(key);
  return v && v->is_array() && !v->get_array().empty();
}

// A policy that names no direction isolates ingress, and egress too once it
// has egress rules: a watcher reading the stored object sees the directions
// the network enforces, never an absent list.
void DefaultPolicyTypes(json::object& policy) {
  json::value& spec = policy["spec"];
  // The API server decodes into a struct: a missing spec is an empty one. A
  // spec of the wrong type is left for what reads it (nothing validates here).
  if (spec.is_null()) spec = json::object{};
  if (!spec.is_object()) return;
  json::object& s = spec.get_object();
  if (const json::value* given = s.if_contains("policyTypes");
      given && !given->is_null() && !given->is_array())
    return;  // not a list: a real server refuses it; the simulator does not validate
  if (NonEmptyList(s, "policyTypes")) return;
  json::array types{"Ingress"};
  if (NonEmptyList(s, "egress")) types.emplace_back("Egress");
  s["policyTypes"] = std::move(types);
}

}  // namespace

void ApplyDefaults(const ResourceKind& kind, json::value& object) {
  if (!object.is_object()) return;
  if (kind.group == "networking.k8s.io" && kind.plural == "networkpolicies")
    DefaultPolicyTypes(object.get_object());
}

}  // namespace fk::sim
