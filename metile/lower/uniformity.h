// Which Tile IR scalars hold the same value in every thread of a threadgroup. Ops declared
// Varying (thread_id, SIMD collectives) are per-thread, except a scalar atomic with uniform
// operands outside per-thread regions, which one thread does for all; those declared UniformResult
// (reduce) are uniform; everything else computed only from uniform scalars is uniform;
// a loop-carried scalar is uniform when its initial value and every yield are; an if's result
// when its condition and both yields are. Tiles are reported as not uniform.
#pragma once

#include <vector>

#include "metile/ir/ir.h"

namespace metile::lower {

// Indexed by ValueId.
std::vector<bool> analyze_uniformity(const ir::Kernel& tile);

}  // namespace metile::lower
