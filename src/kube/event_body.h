// An events.k8s.io/v1 Event about one object (docs/design.md#events): the
// fields fencekeeper fills, serialized here so that the reconciler builds no
// JSON of its own.
#pragma once

#include <string>

namespace fk::kube {

struct EventSpec {
  std::string name, ns;
  std::string event_time;  // RFC 3339 with microseconds (FormatMicroTime)
  std::string type;        // Normal | Warning
  std::string reason, action;
  std::string reporting_controller, reporting_instance;
  struct Regarding {
    std::string api_version, kind, ns, name, uid;
  } regarding;
  std::string note;
};

std::string EventBody(const EventSpec& e);

}  // namespace fk::kube
