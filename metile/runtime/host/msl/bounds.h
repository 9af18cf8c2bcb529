// The bounds checks of kernels emitted for the host target (codegen: CEmitter's
// check_access): every device access is compared with its buffer's extent, so a read one
// byte past the end is caught as surely as one a megabyte past it, which the guard pages
// alone do not (docs/host_emulator.md, "Out-of-bounds detection").
#pragma once

#include <cstdint>

#include "sync.h"

namespace metal {
namespace detail {

// The byte size of each kernel parameter's buffer for the launch this OS thread runs; set by
// the trampoline before it calls the body or the work-group function.
inline thread_local const unsigned long long* buffer_bytes = nullptr;

// Parameter i's extent; unlimited where no trampoline set them (the body compiled and called
// on its own, as tests of the emitter do), so that only the emulator's launches are checked.
inline unsigned long long buffer_extent(unsigned i) {
  return buffer_bytes ? buffer_bytes[i] : ~0ull;
}

// Whether the `bytes` at p lie inside the `extent` bytes at base.
inline bool in_bounds(const void* p, const void* base, unsigned long long extent, unsigned bytes) {
  const unsigned long long offset = static_cast<unsigned long long>(
      reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(base));
  return extent >= bytes && offset <= extent - bytes;
}

// Reports the access and abandons the threadgroup. Cold and out of line, so that a check
// costs a compare and a branch where it is not removed.
[[noreturn, gnu::cold, gnu::noinline]] inline void out_of_bounds(unsigned param, const void* p,
                                                                 const void* base, unsigned bytes,
                                                                 int is_write, int line,
                                                                 unsigned thread) {
  const long long offset = static_cast<long long>(reinterpret_cast<std::uintptr_t>(p) -
                                                  reinterpret_cast<std::uintptr_t>(base));
  host_runtime->out_of_bounds(thread, param, offset, bytes, is_write, line);
  __builtin_unreachable();
}

// Whether the `bytes` at p lie inside one live buffer: the check of an access through a
// pointer made from an integer (Triton's int_to_ptr), which no parameter bounds.
inline bool in_some_buffer(const void* p, unsigned bytes) {
  return !buffer_bytes || host_runtime->in_some_buffer(p, bytes) != 0;
}

[[noreturn, gnu::cold, gnu::noinline]] inline void outside_every_buffer(const void* p,
                                                                        unsigned bytes,
                                                                        int is_write, int line,
                                                                        unsigned thread) {
  host_runtime->out_of_bounds(thread, ~0u,
                              static_cast<long long>(reinterpret_cast<std::uintptr_t>(p)), bytes,
                              is_write, line);
  __builtin_unreachable();
}

}  // namespace detail
}  // namespace metal
