// Random identities drawn once per process: the writer id that marks every
// intent this process issues (docs/transitions.md#the-writer-id) and the
// random part of the leader-election holder identity.
#pragma once

#include <array>
#include <string>

namespace fk {

// 16 bytes from /dev/urandom (std::random_device if it cannot be read).
std::array<unsigned char, 16> RandomBytes();

// 128 random bits as 32 lower-case hex digits: the writer id of one `run`
// process. A seq is unique only inside one journal; the writer id makes an
// intent's mark on an object unique across journals (a replaced volume, a
// restored backup, the other replica's journal).
std::string NewWriterId();

}  // namespace fk
