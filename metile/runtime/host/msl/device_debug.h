// What metile.device_assert and metile.device_print become on the host emulator: the emitted
// MSL calls these (an Apple GPU target rejects such kernels before emitting them).
#pragma once

#include <cstdio>

#include "sync.h"

namespace metal {

// A failed device_assert of `thread` at the kernel's source line file:line.
[[noreturn]] inline void metile_device_assert_failed(const char* message, const char* file,
                                                     int line, unsigned thread) {
  detail::host_runtime->assert_failed(thread, message, file, line);
  __builtin_unreachable();
}

// One device_print line, written at once so that lines of concurrent threadgroups do not mix.
template <class... T>
inline void metile_device_print(const char* format, T... values) {
  std::printf(format, values...);
  std::fflush(stdout);
}

}  // namespace metal
