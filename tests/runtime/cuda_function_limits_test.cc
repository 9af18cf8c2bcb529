// The compiled CUDA function's limits, checked before it is cached or launched: no GPU
// needed, the driver's answers are given.
#include <gtest/gtest.h>

#include "metile/runtime/cuda/function_limits.h"
#include "metile/support/errors.h"

namespace metile::runtime::cuda {
namespace {

codegen::KernelABI abi(int threads, int64_t dynamic_shared) {
  codegen::KernelABI a;
  a.kernel_name = "k";
  a.threads_per_threadgroup = {threads, 1, 1};
  a.threadgroup_bytes = dynamic_shared;
  return a;
}

std::string error_of(const codegen::KernelABI& a, const FunctionLimits& limits) {
  try {
    check_function_limits(a, limits, 232448, 65536, "NVIDIA H200 (compute capability 9.0)");
  } catch (const OutOfResources& e) {
    return e.what();
  }
  return "no error";
}

TEST(CudaFunctionLimits, ABlockTheCompiledCodeCannotRunIsOutOfResources) {
  EXPECT_EQ(error_of(abi(1024, 0), {1024, 0, 64}), "no error");
  EXPECT_EQ(error_of(abi(1024, 0), {768, 0, 80}),
            "out of resources: kernel 'k' runs 1024 threads per block, but compiled with 80 "
            "registers per thread it may run at most 768 on NVIDIA H200 (compute capability 9.0), "
            "whose blocks have 65536 registers");
}

TEST(CudaFunctionLimits, StaticAndDynamicSharedMemoryTogether) {
  EXPECT_EQ(error_of(abi(256, 232448 - 1024), {1024, 1024, 32}), "no error");
  EXPECT_EQ(error_of(abi(256, 232448), {1024, 16, 32}),
            "out of resources: kernel 'k' needs 232464 bytes of shared memory per block (16 "
            "static, 232448 dynamic); NVIDIA H200 (compute capability 9.0) allows 232448");
}

}  // namespace
}  // namespace metile::runtime::cuda
