// A strided copy: the kernel of a materialised view op (views.h) and of each concat operand.
#pragma once

#include <string>

#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"

namespace metile::graph {

// Writes the elements of `source` (a view over `shape`) to `target` (a view of the value
// `target_value`'s buffer over the same shape), in blocks of 1024 elements. `op_id` is the op
// the copy computes (part of).
RegionKernel copy_kernel(const Graph& graph, const ViewPlan& views, int op_id, const View& source,
                         const Shape& shape, int target_value, const View& target);

// The kernels of a view op that is not a view, or of a concat: one copy each.
std::vector<RegionKernel> copy_kernels(const Graph& graph, const ViewPlan& views, int op_id);

}  // namespace metile::graph
