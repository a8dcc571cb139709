// One stored Event, two APIs: the API server keeps a single Event resource
// and serves it both as events.k8s.io/v1 (what fencekeeper writes) and as
// core/v1 (what `kubectl describe` and `kubectl events` read). The simulator
// stores the events.k8s.io/v1 form and converts field by field, as the real
// server's conversion does (pkg/apis/events/v1 of kubernetes/kubernetes):
//
//   events.k8s.io/v1          core/v1
//   note                      message
//   regarding                 involvedObject
//   deprecatedSource          source
//   deprecatedFirstTimestamp  firstTimestamp
//   deprecatedLastTimestamp   lastTimestamp
//   deprecatedCount           count
//   reportingController       reportingComponent
//   eventTime, series, action, reason, type, related, reportingInstance: same name
#pragma once

#include <boost/json/fwd.hpp>
#include <optional>
#include <string>

#include "sim/resources.h"

namespace fk::sim {

// Whether `kind` is the core/v1 view of the events stored as events.k8s.io/v1.
bool IsCoreEventView(const ResourceKind& kind);

// events.k8s.io/v1 (stored) -> core/v1, and back.
boost::json::value CoreEventFromStored(boost::json::value stored);
boost::json::value StoredEventFromCore(boost::json::value core);

// The field selectors the API server accepts on Events (either API), all
// named as in core/v1: metadata.name, metadata.namespace, involvedObject.*,
// reason, reportingComponent, source, type.
bool IsEventSelectableField(const std::string& key);
// The value of a selectable field of a stored Event ("" if unset).
std::optional<std::string> EventFieldValue(const boost::json::value& stored,
                                           const std::string& key);

}  // namespace fk::sim
