// Row statistics stay with their rows (issue 27, "layouts on values"): the result of an axis
// reduction takes the slice of its source's layout, the layout in which each thread holds the
// reduced values of exactly the rows (or columns) it holds elements of. Where the reduced
// bits are lanes of a SIMD group the slice is replicated (ir::ThreadLayout): every lane of the
// row keeps the row's value after the butterfly, so the reduction needs no threadgroup scratch
// and broadcasting the statistic back over the row (softmax's `x - max[:, None]`, a norm's
// `x * rstd[:, None]`) reads the thread's own registers.
#pragma once

#include "metile/ir/ir.h"
#include "metile/ir/thread_layout.h"
#include "metile/lower/plan_threads.h"

namespace metile::lower {

// The layout of the [rows] (axis 1 reduced) or [columns] (axis 0 reduced) result of reducing
// a [rows, columns] tile held in `source`: the kept logical bits stay on their thread bits,
// their register bits are renumbered densely, and thread bits of the reduced axis replicate.
ir::ThreadLayout axis_slice(const ir::ThreadLayout& source, int64_t rows, int64_t columns,
                            int axis);

// Gives each tile size that axis reductions produce the slice of their sources' layout, when
// each reduction combines registers and lanes of one SIMD group only (one that crosses SIMD
// groups publishes partials through scratch, and a slice would only make every replica read
// them all), the reductions agree, no layout is planned for that size yet, and every tile of
// the size is
// a vector ([n], [n, 1] or [1, n]) that only ops which handle replicas read and write
// (elementwise math, splat, arange, expand_dims, broadcast, loads, stores, control flow).
void plan_axis_slices(const ir::Kernel& kernel, ThreadPlan& plan, int simd_width);

}  // namespace metile::lower
