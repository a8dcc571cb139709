// The API server's defaulting of the objects the simulator serves: what a
// real server fills in on every create and update (POST, PUT and each kind of
// PATCH) before it stores the object and compares it with the stored one, so
// watchers, lists and gets all see the defaulted object and a write that
// changes nothing once defaulted is a no-op.
#pragma once

#include <boost/json/fwd.hpp>

#include "sim/resources.h"

namespace fk::sim {

// Fills in `object`'s defaults as the API server does for `kind` (storage
// version). Today: a networking.k8s.io/v1 NetworkPolicy whose
// spec.policyTypes is absent or empty gets ["Ingress"], plus "Egress" when
// spec.egress is a non-empty list (k8s pkg/apis/networking/v1
// SetDefaults_NetworkPolicySpec); a non-empty policyTypes is kept as given.
// Other kinds are left alone.
void ApplyDefaults(const ResourceKind& kind, boost::json::value& object);

}  // namespace fk::sim
