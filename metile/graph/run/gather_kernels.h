// Kernels that move rows by an index read at run time: embedding (a row of the table per id)
// and cache_update (the cache with a window of rows replaced at a position: a copy of the
// cache, or in place, only the window's rows written into the cache input's buffer).
#pragma once

#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"

namespace metile::graph {

RegionKernel embedding_kernel(const Graph& graph, const ViewPlan& views, int op_id);
RegionKernel cache_update_kernel(const Graph& graph, const ViewPlan& views, int op_id);

}  // namespace metile::graph
