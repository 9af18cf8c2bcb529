// Barriers. Each call is a rendezvous in the emulator: the calling thread waits until
// every participant reached the same barrier (same source line); anything else is
// reported as a divergent barrier. The line comes from the call site. Out of line: inlined,
// each barrier's load of host_runtime gave GCC's partial redundancy elimination work that
// grows faster than the kernel (1,000 reductions on fibers: 4.2 s of compile, 3.1 s out of
// line; benchmarks/compile_scaling.py).
#pragma once

#include "host_runtime_abi.h"

namespace metal {
namespace detail {
// Set by metile_host_module_init when the emulator loads the module.
inline const MetileHostRuntime* host_runtime = nullptr;
}  // namespace detail

enum class mem_flags : unsigned {
  mem_none = 0,
  mem_device = 1,
  mem_threadgroup = 2,
  mem_texture = 4,
  mem_threadgroup_imageblock = 8,
  mem_object_data = 16,
};
constexpr mem_flags operator|(mem_flags a, mem_flags b) {
  return mem_flags(unsigned(a) | unsigned(b));
}
constexpr mem_flags operator&(mem_flags a, mem_flags b) {
  return mem_flags(unsigned(a) & unsigned(b));
}

[[gnu::noinline]] inline void threadgroup_barrier(mem_flags flags, int line = __builtin_LINE()) {
  detail::host_runtime->threadgroup_barrier(unsigned(flags), line);
}
[[gnu::noinline]] inline void simdgroup_barrier(mem_flags, int line = __builtin_LINE()) {
  detail::host_runtime->simd_rendezvous(nullptr, 0, "simdgroup_barrier", line);
}

}  // namespace metal
