// Edits of a running simulator's cluster that the demo and tests make
// between passes of the controller (declared in sim/scenario.h), written
// through the store so watchers see them as any client's writes.
#include <boost/json.hpp>

#include "sim/scenario.h"
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

}  // namespace fk::sim
