#include "common/heap.h"

#include <malloc.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define FK_SANITIZED_MALLOC 1  // clang
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FK_SANITIZED_MALLOC 1  // gcc
#endif

namespace fk {

void ReturnFreedMemory() {
#ifndef FK_SANITIZED_MALLOC
  malloc_trim(0);
#endif
}

}  // namespace fk
