// The row form of a region without matmuls: the region's domain (the reduced tensor's shape,
// or the broadcast of its results) is rows x columns, the last axis being the columns; one
// program per row. A region with a row op holds the whole row in one tile; an elementwise
// region walks the row in blocks. Operands broadcast against the domain as numpy does.
#pragma once

#include <vector>

#include "metile/graph/run/region_kernel.h"

namespace metile::graph {

// The kernel computing `ops` (op ids, topological) that reads `inputs` and writes `outputs`
// (value ids). UserError "not supported" for a reduction along another axis than the last,
// or a row wider than the largest tile.
RegionKernel row_kernel(const Graph& graph, const std::vector<int>& ops,
                        const std::vector<int>& inputs, const std::vector<int>& outputs);

}  // namespace metile::graph
