// The C++ appended to an emitted MSL source so the emulator can call its body function:
// metile_host_module_init (receives the runtime table) and metile_host_run_thread
// (unpacks the argument array per the KernelABI and calls <kernel>_body for one thread).
#pragma once

#include <string>

#include "metile/codegen/kernel_abi.h"

namespace metile::runtime::host {

std::string generate_trampoline(const codegen::KernelABI& abi);

// The memory-access hooks a race-checking build's instrumentation calls (the names of
// GCC's and Clang's -fsanitize=thread): each reports the access to the emulator through the
// runtime table. Defined in the module, so no sanitizer runtime is linked.
std::string race_check_hooks();

}  // namespace metile::runtime::host
