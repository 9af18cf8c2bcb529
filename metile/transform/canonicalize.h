#pragma once

#include "metile/ir/pass_result.h"

namespace metile::transform {

// Simplifies a kernel of either dialect without changing what it computes: folds constant
// arithmetic, comparisons and casts (also of splat constants, giving a splat), applies exact
// algebraic identities (x + 0, x * 1, integer x * 0, x / 1, x | 0, ...), picks the branch of
// a select or if with a constant condition, removes loops that never run, and turns
// broadcasts of splats into splats. Ops whose results were replaced are removed; constants
// left unused are for dce.
ir::PassResult canonicalize(ir::Kernel k);

}  // namespace metile::transform
