// Tile IR -> Tile IR, before expand_tensor_access: a descriptor GEMM (metile_kernels.gemm's
// canonical K loop, match_descriptor_gemm.h) whose epilogue is pointwise
// (descriptor_epilogue.h) becomes one descriptor_matmul op that a tensor backend lowers whole,
// reading its operands from device memory itself (seed 002, "Pointwise GEMM epilogues"). The
// epilogue becomes the op's region; the loop and the store go (dce removes the rest).
//
// It runs only where plan_schedule will pick the tensor backend (tensor_backend_wanted). With
// backend='tensor_ops' required, a kernel of another shape is NotSupported naming the op that
// does not fit; with backend='auto' it is returned unchanged for the SIMD-group path.
#pragma once

#include <optional>
#include <string>

#include "metile/ir/pass_result.h"
#include "metile/lower/lower.h"
#include "metile/schedule/schedule.h"
#include "metile/target/target.h"

namespace metile::lower {

// Whether plan_schedule may choose the tensor backend: the target has Metal 4 tensor ops and
// the Schedule requires tensor_ops, or leaves the backend automatic without a control that
// only the SIMD-group path honours (an explicit vector width, double_buffer=True,
// staging='threadgroup').
bool tensor_backend_wanted(const target::Target& target,
                           const std::optional<schedule::Schedule>& schedule);

// What the pass did, and what it leaves for later steps.
struct DescriptorMatmulForming {
  ir::PassResult result;
  // The epilogue of a descriptor GEMM the pass left for the SIMD-group path (which runs it on
  // the accumulator's registers before the store); lower_to_metal reports it.
  std::optional<FusedEpilogue> unformed_epilogue;
  // Why a kernel with a dot was not formed although the tensor backend was wanted
  // automatically (the op and the reason; empty: it was not declined), for plan_schedule.
  std::string declined;
};

DescriptorMatmulForming form_descriptor_matmul(ir::Kernel tile, const target::Target& target,
                                               const std::optional<schedule::Schedule>& schedule);

}  // namespace metile::lower
