#pragma once

#include "metile/ir/pass_result.h"

namespace metile::transform {

// Removes ops whose results are never used and that have no effect besides their results:
// everything except the ops ops.def declares WritesMemory (stores, barriers) or Terminator
// (yield), and for/if ops whose regions hold one of those. Loads and SIMD collectives
// without users go too.
ir::PassResult eliminate_dead_code(ir::Kernel k);

}  // namespace metile::transform
