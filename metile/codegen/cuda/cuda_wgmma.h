// The asynchronous pipeline ops of sm90 in CUDA (ops.def's AsyncPipeline rule, docs/hopper.md):
// per-thread cp.async copies, mbarriers, TMA tiled loads from __grid_constant__ tensor maps, wgmma
// on 128-byte-swizzled shared memory and setmaxnreg, each one PTX instruction behind a prelude
// helper.
#pragma once

#include <string>
#include <vector>

#include "metile/codegen/dialect.h"
#include "metile/codegen/kernel_abi.h"

namespace metile::codegen::cuda_wgmma {

// The statement of `op`, given its operands' and results' names (wgmma_mma's results are
// declared, holding the accumulator operands, before it); `element` is the dtype its first
// pointer operand points to.
std::string statement(const ir::Op& op, const std::vector<std::string>& operands,
                      const std::vector<std::string>& results, ir::DType element, Prelude& prelude);
// async_copy of `bytes` (4, 8 or 16) as cp.async: a prelude helper's call copying from src to
// dst, zero-filling when pred (or "true") is false.
std::string cp_async(const std::string& src, const std::string& dst, const std::string& pred,
                     int64_t bytes, Prelude& prelude);
// The name of tensor map parameter `index` (entry: by value; body: a pointer to it).
std::string tensor_map_name(int64_t index);
// The prelude type of a tensor map parameter.
void declare_tensor_map(Prelude& prelude);

}  // namespace metile::codegen::cuda_wgmma
