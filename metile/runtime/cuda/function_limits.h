// What the driver says a compiled CUDA function may use, checked against what its ABI asks
// for before the function is cached or launched (issue 11, item 8): the register count the
// compiler chose can lower a function's MAX_THREADS_PER_BLOCK below the block the kernel
// was lowered for, and ownership is never silently remapped to fewer threads.
#pragma once

#include <cstdint>
#include <string>

#include "metile/codegen/kernel_abi.h"

namespace metile::runtime::cuda {

// From cuFuncGetAttribute.
struct FunctionLimits {
  int max_threads_per_block = 0;    // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  int64_t static_shared_bytes = 0;  // CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  int registers_per_thread = 0;     // CU_FUNC_ATTRIBUTE_NUM_REGS
};

// OutOfResources naming the kernel, the block it needs and the limit: more threads than
// max_threads_per_block (the message names the GPU's `max_registers_per_block`, the file
// the threads' registers share), or static plus dynamic shared memory above
// `max_shared_bytes` (the GPU's opt-in limit per block). `device` describes the GPU.
void check_function_limits(const codegen::KernelABI& abi, const FunctionLimits& limits,
                           int64_t max_shared_bytes, int max_registers_per_block,
                           const std::string& device);

}  // namespace metile::runtime::cuda
