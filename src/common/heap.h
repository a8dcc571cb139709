// Handing freed heap back to the system.
#pragma once

namespace fk {

// glibc keeps freed heap in its arenas, so a process's resident size stays at
// its last peak (a listing's pages, a batch of journal rows) long after the
// memory is free. This returns it (malloc_trim): the resident size is then
// what is in use. Costs a walk of the free lists (0.3-5 ms in a controller of
// 30 MiB, measured on a loaded machine), so callers do it after bursts of
// work, not per request. A no-op under ASan or TSan, which replace malloc
// (trimming glibc's unused arenas then crashes).
void ReturnFreedMemory();

}  // namespace fk
