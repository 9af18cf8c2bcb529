// Schedule(vector_width=4) for the SIMD-group GEMM (seed 002: "4 requires vectorized aligned
// interiors; masked tails may remain scalar"), and on its own for 16-bit dots on mma.sync's
// fragments. Before lowering, each dot operand tile gets a layout that gives every thread runs
// of consecutive row elements; lowering recomputes an
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

// The run an operand tile of that type takes: `run`, or fewer where the tile has fewer
// elements per thread or per row.
int64_t operand_run(const ir::Type& tile, int64_t threads, int64_t run);

// Puts a layout giving each thread runs of `run` consecutive row elements first in
// plan.layouts for every dot operand's tile size, and sets plan.operand_vector_run. Required
// (Schedule(vector_width=4), run 4): NotSupported naming the operand whose tile cannot take
// it. Otherwise (the automatic choice for mma.sync's fragments, runs of up to one 16-byte
// vector, shorter where the tile has fewer elements per thread) an operand that cannot take
// runs of two keeps the plan's layout.
void plan_dot_operand_vectors(const ir::Kernel& tile, ThreadPlan& plan, int64_t run, bool required);

// NotSupported naming the first device load of `metal` that group_vector_accesses left
// ungrouped (outside the scalar fallback of a packed access).
void require_grouped_loads(const ir::Kernel& metal);

}  // namespace metile::lower
