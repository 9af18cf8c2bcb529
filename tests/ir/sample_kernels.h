// Small kernels built with the builders, covering every construct of the text form.
#pragma once

#include "metile/ir/ir.h"

namespace metile::ir::samples {

Kernel vector_add();
// A for loop carrying a scalar and a tile, masked loads with `other`, reductions, math.
Kernel softmax_like();
Kernel if_with_results();
Kernel tensor_descriptors();
Kernel shared_and_barrier();
// expand_dims and broadcast to 2-D tiles.
Kernel two_d_tiles();
// Hand-built Metal IR: threadgroup_buffer, simd ops, barrier, vectors, for and if.
Kernel metal_kernel();

}  // namespace metile::ir::samples
