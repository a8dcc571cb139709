// Writing whole files through file descriptors, for files whose mode matters.
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace fk {

// Writes all of `bytes` to `fd` (retrying short writes and EINTR).
bool WriteAll(int fd, std::string_view bytes);

// Creates or replaces `path` with `bytes`, readable by its owner only (0600,
// an existing file's mode included): for files that hold a credential.
Status WritePrivateFile(const std::string& path, std::string_view bytes);

}  // namespace fk
