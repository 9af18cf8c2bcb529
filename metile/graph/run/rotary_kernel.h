// rotary as a kernel: tiles of rows of x (read through its view, so q's head transpose needs
// no kernel of its own), both halves of each row rotated in registers.
#pragma once

#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"

namespace metile::graph {

RegionKernel rotary_kernel(const Graph& graph, const ViewPlan& views, int op_id);

}  // namespace metile::graph
