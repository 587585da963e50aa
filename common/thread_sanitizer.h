// Hand-overs between threads that happen inside libraries not built with
// -fsanitize=thread (DPDK's lcore launch and wait, its rings and mempools):
// ThreadSanitizer cannot see their synchronisation, so the instrumented code
// on each side states it. Release on the giving side, acquire on the taking
// side, on the same address. Without ThreadSanitizer they are nothing.
#pragma once

#if defined(__SANITIZE_THREAD__)
#define SLUICE_TSAN_ACTIVE 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define SLUICE_TSAN_ACTIVE 1
#endif
#endif

#ifdef SLUICE_TSAN_ACTIVE
#include <sanitizer/tsan_interface.h>
#endif

namespace sluice {

inline void tsanRelease([[maybe_unused]] const void* handed_over) {
#ifdef SLUICE_TSAN_ACTIVE
  __tsan_release(const_cast<void*>(handed_over));
#endif
}

inline void tsanAcquire([[maybe_unused]] const void* handed_over) {
#ifdef SLUICE_TSAN_ACTIVE
  __tsan_acquire(const_cast<void*>(handed_over));
#endif
}

}  // namespace sluice
