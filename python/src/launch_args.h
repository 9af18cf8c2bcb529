// Launching across the Python boundary, shared by CompiledKernel (init_compile.cc) and
// BuiltKernel (init_runtime.cc): the KernelABI as a dict and back, launch arguments from a
// list, and one launch with the GIL released.
#pragma once

#include <nanobind/nanobind.h>

#include <array>
#include <cstdint>
#include <vector>

#include "metile/compile.h"

namespace metile::python {

// {"kernel_name", "body_name", "params": [{"name", "kind", "dtype", "access"}],
//  "threads_per_threadgroup": (x, y, z), "threadgroup_bytes", "grid_rule"}
nanobind::dict abi_dict(const codegen::KernelABI& abi);
// The inverse of abi_dict (lists for tuples are accepted, so JSON round-trips); ValueError
// naming the first missing or malformed field.
codegen::KernelABI abi_from_dict(const nanobind::dict& abi);

// One KernelArg per element: BufferView, DeviceBuffer, int or float; TypeError otherwise.
std::vector<KernelArg> launch_args(const nanobind::list& args);

// Launches `kernel` on `stream`, waiting or not, with the GIL released: the device's time in
// milliseconds when it waited, else None. A compiled kernel's launch also refuses address
// offsets that would wrap (check_offset_ranges.h); a device build of a bare source has no
// Tile IR to check.
nanobind::object launch_on_stream(const CompiledKernel& kernel, std::array<int64_t, 3> grid,
                                  const nanobind::list& args, uintptr_t stream, bool wait);
nanobind::object launch_on_stream(const runtime::CompiledKernel& kernel,
                                  std::array<int64_t, 3> grid, const nanobind::list& args,
                                  uintptr_t stream, bool wait);

// The docstring of both launch() methods.
inline constexpr const char* kLaunchDoc =
    "Runs grid[0] x grid[1] x grid[2] programs with one argument per kernel parameter "
    "(BufferView, DeviceBuffer, int or float) on the device's stream `stream` (a CUstream on "
    "the cuda device; 0: its default stream). wait=True: returns the device's time in ms once "
    "the kernel finished. wait=False: returns None once it is queued (a launch with a "
    "BufferView still waits, to copy it back); a fault surfaces at the next synchronising "
    "call.";

}  // namespace metile::python
