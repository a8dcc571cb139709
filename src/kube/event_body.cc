#include "kube/event_body.h"

#include <boost/json.hpp>

namespace fk::kube {

std::string EventBody(const EventSpec& e) {
  namespace json = boost::json;
  const json::object event{{"apiVersion", "events.k8s.io/v1"},
                           {"kind", "Event"},
                           {"metadata", {{"name", e.name}, {"namespace", e.ns}}},
                           {"eventTime", e.event_time},
                           {"type", e.type},
                           {"reason", e.reason},
                           {"action", e.action},
                           {"reportingController", e.reporting_controller},
                           {"reportingInstance", e.reporting_instance},
                           {"regarding",
                            {{"apiVersion", e.regarding.api_version},
                             {"kind", e.regarding.kind},
                             {"namespace", e.regarding.ns},
                             {"name", e.regarding.name},
                             {"uid", e.regarding.uid}}},
                           {"note", e.note}};
  return json::serialize(event);
}

}  // namespace fk::kube
