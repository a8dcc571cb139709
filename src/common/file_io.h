// Writing whole files through file descriptors, for files whose mode matters.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace fk {

// Writes all of `bytes` to `fd` (retrying short writes and EINTR); on false,
// errno says why.
bool WriteAll(int fd, std::string_view bytes);

// Creates or replaces `path` with `bytes`, readable by its owner only (0600,
// whatever the file it replaces allowed): for files that hold a credential.
// Atomic: written beside it ("<path>.tmp") and renamed over it.
Status WritePrivateFile(const std::string& path, std::string_view bytes);

}  // namespace fk
