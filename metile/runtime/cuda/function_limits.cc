#include "metile/runtime/cuda/function_limits.h"

#include "metile/support/errors.h"

namespace metile::runtime::cuda {

void check_function_limits(const codegen::KernelABI& abi, const FunctionLimits& limits,
                           int64_t max_shared_bytes, int max_registers_per_block,
                           const std::string& device) {
  const std::string kernel = "kernel '" + abi.kernel_name + "'";
  if (abi.threads_total() > limits.max_threads_per_block)
    throw OutOfResources(
        kernel + " runs " + std::to_string(abi.threads_total()) +
        " threads per block, but compiled with " + std::to_string(limits.registers_per_thread) +
        " registers per thread it may run at most " + std::to_string(limits.max_threads_per_block) +
        " on " + device + ", whose blocks have " + std::to_string(max_registers_per_block) +
        " registers");
  const int64_t shared = limits.static_shared_bytes + abi.threadgroup_bytes;
  if (shared > max_shared_bytes)
    throw OutOfResources(kernel + " needs " + std::to_string(shared) +
                         " bytes of shared memory per block (" +
                         std::to_string(limits.static_shared_bytes) + " static, " +
                         std::to_string(abi.threadgroup_bytes) + " dynamic); " + device +
                         " allows " + std::to_string(max_shared_bytes));
}

}  // namespace metile::runtime::cuda
