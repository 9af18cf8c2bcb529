// The KernelABI of a Metal IR kernel: its parameters, threadgroup size and threadgroup block.
#pragma once

#include "metile/codegen/kernel_abi.h"
#include "metile/ir/ir.h"

namespace metile::codegen {

// Reads the kernel attributes threads_per_threadgroup and threadgroup_bytes; throws UserError
// when either is missing or out of range, or a parameter is neither a device buffer with an
// access nor a scalar.
KernelABI build_abi(const ir::Kernel& metal);

}  // namespace metile::codegen
