// The PTX renderer: Metal IR straight to PTX for sm_90, which the CUDA driver compiles itself
// (cuModuleLoadData), with no NVRTC. A sibling of the C dialects (renderer.h), for the
// restricted subset of seed 003's direct-IR backend: masked loads and stores, grouped vector
// accesses, integer address arithmetic, float math, warp shuffles and reductions, barriers,
// structured for/if. Every other op is NotSupported naming it; selected by Schedule(route="ptx")
// (docs/ptx_route.md).
#pragma once

#include "metile/codegen/renderer.h"

namespace metile::codegen {

const Renderer& ptx_renderer();

}  // namespace metile::codegen
