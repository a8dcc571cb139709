#include "cli/probes.h"

namespace fk::cli {

http::Reply Probe(const http::Request& req, reconciler::Manager& manager,
                  reconciler::Metrics& metrics, bool serve_metrics) {
  if (req.path == "/healthz" || req.path == "/livez") return http::Reply{200, "ok\n"};
  if (req.path == "/readyz") {
    const auto all = manager.ReadinessChecks();
    // The gauge keeps the whole verdict; an exclusion is the asker's view.
    metrics.Ready(reconciler::AllReady(all));
    const auto excluded = http::QueryParameterValues(req.query, "exclude");
    const auto checks = reconciler::Excluding(all, excluded);
    const bool ready = reconciler::AllReady(checks);
    const int code = ready ? 200 : 503;
    if (http::HasQueryParameter(req.query, "verbose"))
      return http::Reply{code, reconciler::VerboseReadiness(all, excluded)};
    return http::Reply{code, ready ? "ready\n" : "not ready\n"};
  }
  if (serve_metrics) return MetricsEndpoint(req, manager);
  return http::Reply{404, "not found\n"};
}

http::Reply MetricsEndpoint(const http::Request& req, reconciler::Manager& manager) {
  if (req.path == "/metrics")
    return http::Reply{200, manager.RenderMetrics(), "text/plain; version=0.0.4; charset=utf-8"};
  return http::Reply{404, "not found\n"};
}

}  // namespace fk::cli
