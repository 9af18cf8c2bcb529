// The tile form of a region with matmuls: one program per BLOCK_M x BLOCK_N tile of the
// matmuls' common output (grid z walks the batch axes; the tiles suit the target,
// matmul_tiles.h), every matmul of one inner size accumulating in one loop over K (operands
// that are the same value are loaded once), then the elementwise epilogue on the
// accumulators, then the stores.
#pragma once

#include <vector>

#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"

namespace metile::graph {

// `ops`: matmuls of one output shape and elementwise ops of that shape, topological. A
// matmul operand that is a view (views.h) is read through its strides. `spill`: the
// low-register (scratch-spilled) schedule: matmuls of one inner size reduce one after another
// with one accumulator, each finished result but the last waiting in threadgroup scratch.
RegionKernel matmul_kernel(const Graph& graph, const ViewPlan& views, const std::vector<int>& ops,
                           const std::vector<int>& inputs, const std::vector<int>& outputs,
                           bool spill = false,
                           const target::Target& target = target::default_target());

}  // namespace metile::graph
