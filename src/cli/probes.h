// What `run` serves over HTTP. --http-addr: /healthz and /livez (the process
// runs), /readyz (plain: status and a short body; ?verbose: every check, as
// Kubernetes components list them), and /metrics too unless --metrics-addr
// gives metrics a listener of their own (MetricsEndpoint), which a
// NetworkPolicy can then open to the monitoring namespace alone.
#pragma once

#include "http/server.h"
#include "reconciler/manager.h"

namespace fk::cli {

http::Reply Probe(const http::Request& request, reconciler::Manager& manager,
                  reconciler::Metrics& metrics, bool serve_metrics);

// /metrics, and 404 for every other path.
http::Reply MetricsEndpoint(const http::Request& request, reconciler::Manager& manager);

}  // namespace fk::cli
