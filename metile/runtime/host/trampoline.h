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

// The memory-access hooks a race-checking build's instrumentation calls (the names of
// GCC's and Clang's -fsanitize=thread): each reports the access to the emulator through the
// runtime table. Defined in the module, so no sanitizer runtime is linked.
std::string race_check_hooks();

}  // namespace metile::runtime::host
