// The C++ appended to an emitted MSL source so the emulator can call its body function:
// metile_host_module_init (receives the runtime table) and metile_host_run_thread
// (unpacks the argument array per the KernelABI and calls <kernel>_body for one thread);
// where the source has a work-group function (its marker line, workgroup_emitter.h) and
// races are not checked, also metile_host_run_threadgroup, which calls it for a whole
// threadgroup. metile_host_execution names the strategy and, for fibers, why.
#pragma once

#include <string>
#include <string_view>

#include "metile/codegen/kernel_abi.h"

namespace metile::runtime::host {

std::string generate_trampoline(const codegen::KernelABI& abi, std::string_view msl,
                                bool race_check);

// Whether the module runs msl's work-group function: the source has one and races are not
// checked. A module that does not runs only the body function, one thread at a time, and is
// compiled with the math functions out of line (scalar_math_prefix).
bool runs_as_workgroup(std::string_view msl, bool race_check);
// The lines put before such a module's source: METILE_HOST_SCALAR_MATH (math_functions.h),
// then `#line 1`, so the source's own lines keep their numbers for fault reports.
inline constexpr const char* kScalarMathPrefix = "#define METILE_HOST_SCALAR_MATH 1\n#line 1\n";

// The memory-access hooks a race-checking build's instrumentation calls (the names of
// GCC's and Clang's -fsanitize=thread): each reports the access to the emulator through the
// runtime table. Defined in the module, so no sanitizer runtime is linked.
std::string race_check_hooks();

}  // namespace metile::runtime::host
