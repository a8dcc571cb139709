// Server-side printing: what `kubectl get` shows. kubectl asks for
// `Accept: application/json;as=Table;v=v1;g=meta.k8s.io, application/json`,
// and the API server answers a meta.k8s.io/v1 Table whose columns come from
// the resource's printer (for a CRD, its additionalPrinterColumns). The
// simulator has columns for Sandboxes (NAME MODE FENCE AGE) and core/v1
// Events (LAST SEEN TYPE REASON OBJECT MESSAGE, as `kubectl get events`);
// other kinds answer plain JSON, which kubectl accepts as the fallback it
// also asked for.
#pragma once

#include <boost/json/fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "common/clock.h"
#include "sim/resources.h"

namespace fk::sim {

// Whether the Accept header asks for a meta.k8s.io/v1 Table.
bool WantsTable(std::string_view accept);
// Whether the simulator prints `kind` as a Table.
bool HasPrinterColumns(const ResourceKind& kind);

// The additionalPrinterColumns a CRD for `kind` would declare (name, type,
// jsonPath, description), for discovery documents that show them.
boost::json::array PrinterColumns(const ResourceKind& kind);

// A Table of `objects` of `kind` (in the version the client asked for), ages
// measured at `now`; each row carries the object's metadata as
// PartialObjectMetadata, as with the server's default includeObject=Metadata.
boost::json::value Table(const ResourceKind& kind, const std::vector<boost::json::value>& objects,
                         const std::string& resource_version, WallTime now);

// kubectl's short age: 45s, 3m20s, 12m, 5h3m, 20h, 3d4h, 40d, 2y.
std::string HumanAge(std::chrono::seconds age);

}  // namespace fk::sim
