// What a work-group function (codegen/host/workgroup_emitter.h) calls besides the MSL it
// shares with the body: the report of a SIMD lane read that has no lane to read.
#pragma once

#include <cstdio>

#include "sync.h"

// Emitted work-group functions sit under this guard, so the host target's source stays MSL.
#define METILE_HOST_EMULATOR 1

namespace metal {
namespace detail {

[[noreturn]] inline void workgroup_missing_lane(const char* op, int line, unsigned thread,
                                                unsigned source, unsigned lanes) {
  char message[256];
  std::snprintf(message, sizeof message,
                "%s (line %d): lane %u reads lane %u, which does not exist in its SIMD group "
                "of %u threads",
                op, line, thread % METILE_HOST_SIMD_WIDTH, source, lanes);
  host_runtime->fail_thread(thread, message);
  __builtin_unreachable();
}

}  // namespace detail
}  // namespace metal
