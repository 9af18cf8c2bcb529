// Threads per threadgroup for a Tile IR kernel (see docs/lowering.md, "Thread plan").
#pragma once

#include "metile/lower/lower.h"

namespace metile::lower {

// A power of two in [simd_width, max_threads_per_threadgroup]: the largest tile's size / 4,
// clamped to that range and to the target's default ceiling; the kernel attribute
// `num_threads` overrides the rule (UserError unless it is a power of two within the target's
// limits).
ThreadPlan plan_threads(const ir::Kernel& tile, const target::Target& target);

}  // namespace metile::lower
