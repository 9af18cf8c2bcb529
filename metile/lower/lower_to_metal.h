// Tile IR -> Metal IR (see docs/lowering.md): every tile value gets the identity ThreadLayout
// over the plan's thread count and becomes one SSA scalar per register slot; reductions become
// SIMD and threadgroup collectives; broadcasts that cross threads exchange through threadgroup
// scratch; threadgroup memory is laid out in one block. The input must already be free of
// tensor descriptors (expand_tensor_access). Unsupported ops raise NotSupported naming the op.
#pragma once

#include <optional>

#include "metile/lower/lower.h"
#include "metile/schedule/schedule_plan.h"

namespace metile::lower {

// `schedule` is plan_schedule's plan (metile/schedule/schedule_plan.h); the matrix lowerings
// read it through Lowering::schedule_plan. `unformed_epilogue` is the epilogue of a descriptor
// GEMM form_descriptor_matmul left in the kernel: the SIMD-group path runs it on the
// accumulator's registers, so the result lists it among its fused epilogues.
LoweringResult lower_to_metal(const ir::Kernel& tile, const ThreadPlan& plan,
                              const target::Target& target, const schedule::SchedulePlan& schedule,
                              const std::optional<FusedEpilogue>& unformed_epilogue = std::nullopt);

}  // namespace metile::lower
