#pragma once

#include "metile/ir/ir.h"

namespace metile::transform {

// Checks that a Tile IR kernel's metile.barrier() calls order its scalar and matrix fragment
// accesses of each shared allocation (seed 002, "Composable matrix fragments"):
//
// - a scalar store before a matrix load of the same elements needs a barrier between them
//   (publication of scalar writes to the SIMD group's matrix load);
// - a matrix store before a scalar load of the same elements needs one (publication of the
//   fragment to every thread);
// - a matrix load before a store (scalar or matrix) of the same elements needs one (the
//   matrix read finishes before the storage is overwritten);
// - a loop's backedge counts: an access late in the body meets the next iteration's early one.
//
// Elements are compared as index ranges of the allocation: matrix accesses cover their 8x8
// tile, scalar ones the range of their index (constants, thread_id, loop indices and integer
// arithmetic on them). Provably disjoint ranges need no barrier; an index the analysis cannot
// bound, or a lossy integer conversion, covers the whole allocation. A violation is a
// UserError naming the kernel, the allocation, both accesses and the missing barrier. A shared
// pointer that does not resolve to its allocation through ptr_add (a select, a loop-carried or
// if-yielded pointer) is NotSupported. Kernels without matrix loads or stores pass unchecked.
void check_matrix_barriers(const ir::Kernel& kernel);

}  // namespace metile::transform
