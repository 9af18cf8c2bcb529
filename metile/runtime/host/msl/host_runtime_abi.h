// The C interface between the host emulator and a compiled kernel module. The module is
// dlopen'ed with RTLD_LOCAL, so it cannot see the emulator's symbols: the emulator hands
// it this table of function pointers at load time (metile_host_module_init), and the
// metal_stdlib emulation reaches barriers and SIMD collectives through it.
#pragma once

#define METILE_HOST_ABI_VERSION 7u
// Bytes each lane may deposit in one SIMD rendezvous (a long4 is 32).
#define METILE_HOST_SIMD_SLOT_BYTES 64u
#define METILE_HOST_SIMD_WIDTH 32u

extern "C" {

// What a lane sees after a SIMD rendezvous: every lane's deposit, slot l at
// slots + l * METILE_HOST_SIMD_SLOT_BYTES, valid until this lane's next rendezvous.
struct MetileHostSimdView {
  const unsigned char* slots;
  unsigned lane;
  unsigned lane_count;  // lanes that exist in this SIMD group (< 32 for a partial group)
  // A result every lane shares (a reduction's), METILE_HOST_SIMD_SLOT_BYTES long: the first
  // lane to compute it stores it and sets *shared_ready, so the others copy it.
  unsigned char* shared;
  unsigned* shared_ready;
};

// The coordinates of one emulated thread, as the body function receives them.
struct MetileHostThreadCoords {
  unsigned threadgroup_position_in_grid[3];
  unsigned threadgroups_per_grid[3];
  unsigned thread_position_in_threadgroup[3];
  unsigned threads_per_threadgroup[3];
  unsigned simd_lane;
  unsigned simd_group;
};

struct MetileHostRuntime {
  unsigned abi_version;
  // Blocks until every thread of the threadgroup reached the barrier at `line`.
  void (*threadgroup_barrier)(unsigned mem_flags, int line);
  // Deposits `bytes` of `value` for the calling lane and blocks until every lane of the
  // SIMD group arrived at the same collective (`op` at `line`).
  MetileHostSimdView (*simd_rendezvous)(const void* value, unsigned bytes, const char* op,
                                        int line);
  // The calling thread's lane; cheap, no rendezvous.
  unsigned (*simd_lane)(void);
  // Reports a misuse by the kernel (e.g. reading a lane that does not exist) and abandons
  // the threadgroup. Never returns.
  void (*fail)(const char* message);
  // simdgroup_matrix lane mapping: lane l holds the elements Apple's mapping gives lane
  // matrix_lane_map[l]. The identity unless a test permutes it.
  const unsigned char* matrix_lane_map;
  // Race-checking builds only: the module's memory-access hooks report each load and store
  // (`pc` is the instruction's return address), and the emulator checks threadgroup memory
  // accesses for races between barriers.
  void (*memory_access)(const void* address, unsigned bytes, int is_write, const void* pc);
  // A work-group function's report of a misuse by thread `thread`; abandons the
  // threadgroup. Never returns.
  void (*fail_thread)(unsigned thread, const char* message);
  // A failed device_assert of thread `thread` at the kernel's source line file:line (file
  // "" when unknown); abandons the threadgroup. Never returns.
  void (*assert_failed)(unsigned thread, const char* message, const char* file, int line);
  // The calling thread's index in its threadgroup (fiber execution only): which elements of
  // a Metal 4 cooperative tensor it holds.
  unsigned (*thread_index)(void);
  // A device access that the emitted bounds check (msl/bounds.h) found outside its buffer:
  // `bytes` at `byte_offset` from the start of parameter `param`, by thread `thread` (~0u:
  // the fiber running), at line `line` of the emitted source. Abandons the threadgroup.
  // param ~0u: an access through a pointer made from an integer (Triton's int_to_ptr), which
  // lies in no live buffer; byte_offset is then its address.
  void (*out_of_bounds)(unsigned thread, unsigned param, long long byte_offset, unsigned bytes,
                        int is_write, int line);
  // Whether the `bytes` at `address` lie inside one live buffer (a pointer made from an
  // integer has no parameter to be checked against).
  int (*in_some_buffer)(const void* address, unsigned bytes);
};

// A launch's args array holds one entry per kernel parameter and then one more: the byte
// size of each parameter's buffer (0 for scalars), as `const unsigned long long*`, which the
// bounds checks of host-target kernels read (msl/bounds.h).

// Exported by every kernel module.
typedef unsigned (*MetileHostModuleInitFn)(const MetileHostRuntime* runtime);
typedef void (*MetileHostRunThreadFn)(void* const* args, unsigned char* threadgroup_memory,
                                      const MetileHostThreadCoords* coords);
// Exported by a module whose kernel has a work-group function: runs every thread of the
// threadgroup at coords (whose thread fields are ignored).
typedef void (*MetileHostRunThreadgroupFn)(void* const* args, unsigned char* threadgroup_memory,
                                           const MetileHostThreadCoords* coords);
}
