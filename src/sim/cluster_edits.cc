// Edits of a running simulator's cluster that the demo and tests make
// between passes of the controller (declared in sim/scenario.h), written
// through the store so watchers see them as any client's writes.
#include <boost/json.hpp>

#include "sim/scenario.h"
#include "sim/scenario_objects.h"
#include "sim/store.h"

namespace fk::sim {
namespace json = boost::json;

int64_t RollFence(Simulator& sim, const std::string& ns) {
  Outcome o = sim.store().Mutate(
      *FindKind("networking.k8s.io", "networkpolicies"), ns, "openshell-sandbox-workloads",
      [](json::value& obj) -> std::optional<ApiFailure> {
        json::value& spec = obj.as_object()["spec"];
        if (!spec.is_object()) spec = json::object{};
        json::value& types = spec.as_object()["policyTypes"];
        types = types == json::array{"Egress", "Ingress"} ? json::array{"Ingress", "Egress"}
                                                          : json::array{"Egress", "Ingress"};
        return std::nullopt;
      },
      false);
  if (!o.ok()) return 0;
  return o.object.at("metadata").at("generation").as_int64();
}

namespace {

const ResourceKind& Policies() { return *FindKind("networking.k8s.io", "networkpolicies"); }

Status Failed(const std::string& what, const ApiFailure& failure) {
  return Status::Of(failure.code == 404 ? Code::kNotFound : Code::kRefused,
                    what + ": " + failure.message);
}

}  // namespace

Status AddNetworkPolicy(Simulator& sim, const std::string& ns, const std::string& name,
                        const json::value& spec) {
  // Replace first: a policy that is there keeps its uid, as `kubectl apply`
  // keeps it, and only a spec that changes moves its generation.
  Outcome o = sim.store().Mutate(
      Policies(), ns, name,
      [&](json::value& obj) -> std::optional<ApiFailure> {
        obj.as_object()["spec"] = spec;
        return std::nullopt;
      },
      false);
  if (!o.ok() && o.failure->code == 404)
    o = sim.store().Create(Policies(), ns, NetworkPolicyObject(ns, name, spec));
  if (!o.ok()) return Failed("cannot add NetworkPolicy " + ns + "/" + name, *o.failure);
  return Status::Ok();
}

Status DeleteNetworkPolicy(Simulator& sim, const std::string& ns, const std::string& name) {
  const Outcome o = sim.store().Delete(Policies(), ns, name, std::nullopt, std::nullopt);
  if (!o.ok()) return Failed("cannot delete NetworkPolicy " + ns + "/" + name, *o.failure);
  return Status::Ok();
}

}  // namespace fk::sim
