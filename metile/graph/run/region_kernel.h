// One kernel a region lowers to: its Tile IR, its grid, and which graph value each of its
// buffer parameters binds. Every shape is a constant of the kernel (a graph's shapes are
// static), so kernels take buffers only.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "metile/graph/fusion/fusion_plan.h"
#include "metile/graph/fusion/fusion_rules.h"
#include "metile/ir/ir.h"

namespace metile::graph {
struct ViewPlan;
}

namespace metile::graph {

struct RegionKernel {
  int region = -1;
  // "row", "matmul", "flash_attention", "transpose", "copy", "rotary", "embedding",
  // "cache_update"
  std::string form;
  std::string decision;  // how it was lowered, for explain(): "one row of 2048 per program"
  ir::Kernel kernel;
  std::array<int64_t, 3> grid{1, 1, 1};
  std::vector<int> params;  // graph value id per buffer parameter, in parameter order
  std::vector<int> writes;  // the values it writes (a subset of params)
  std::vector<int> op_ids;  // the ops it computes
};

// The kernels of one region, in launch order: one, or several for a region whose matmul
// consumes another matmul of the region (the SwiGLU block: gate/up with the epilogue, then
// the down projection); none for a view op that `views` makes a view. A parallel_epilogue
// region follows `schedule` ("register-fused" or "scratch-spilled"; empty: the plan's choice,
// region.schedule). Tile sizes suit `target`, the device's (attention takes 128 query rows on
// a target with wgmma). UserError "not supported" for a region no emitter can lower.
std::vector<RegionKernel> lower_region(const FusionPlan& plan, const ViewPlan& views,
                                       const FusedRegion& region, const std::string& schedule = "",
                                       const target::Target& target = target::default_target());

// A kernel parameter name for a graph value: the input's name, or "v3" for op results.
std::string param_name(const Graph& graph, int value);

}  // namespace metile::graph
