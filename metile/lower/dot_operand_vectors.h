// Schedule(vector_width=4) for the SIMD-group GEMM (seed 002: "4 requires vectorized aligned
// interiors; masked tails may remain scalar"). Before lowering, each dot operand tile gets a
// layout that gives every thread runs of 4 consecutive row elements; lowering recomputes an
// operand load's addresses and masks per element from their definitions
// (lower_vectorized_operand_load, lowering_steps.h), so group_vector_accesses can prove each
// run's four addresses consecutive (it guards them at run time with the masks and alignment);
// after grouping, every device load must be grouped or be a grouped access's scalar tail.
// What cannot be proven is NotSupported, with why.
#pragma once

#include <string>

#include "metile/ir/ir.h"
#include "metile/lower/plan_threads.h"

namespace metile::lower {

// Puts a 4-contiguous layout for every dot operand's tile size first in plan.layouts;
// NotSupported naming the operand when its tile cannot give each thread such runs.
void plan_dot_operand_vectors(const ir::Kernel& tile, ThreadPlan& plan);

// NotSupported naming the first device load of `metal` that group_vector_accesses left
// ungrouped (outside the scalar fallback of a packed access).
void require_grouped_loads(const ir::Kernel& metal);

}  // namespace metile::lower
