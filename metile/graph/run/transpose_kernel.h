// transpose as a kernel: 32 x 32 tiles of the last two axes, read through one tensor
// descriptor and written through the other (grid z walks the batch axes).
#pragma once

#include "metile/graph/run/region_kernel.h"

namespace metile::graph {

RegionKernel transpose_kernel(const Graph& graph, int op_id);

}  // namespace metile::graph
