// This machine's host name: the leader-election identity, Events'
// reportingInstance and the journal lock's holder details name it.
#pragma once

#include <string>

namespace fk {

// gethostname(2); "fencekeeper" if it fails.
std::string HostName();

}  // namespace fk
