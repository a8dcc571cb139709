// What `run --http-addr` serves: /healthz and /livez (the process runs),
// /readyz (plain: status and a short body; ?verbose: every check, as
// Kubernetes components list them) and /metrics.
#pragma once

#include "http/server.h"
#include "reconciler/manager.h"

namespace fk::cli {

http::Reply Probe(const http::Request& request, reconciler::Manager& manager,
                  reconciler::Metrics& metrics);

}  // namespace fk::cli
