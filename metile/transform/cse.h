#pragma once

#include "metile/ir/pass_result.h"

namespace metile::transform {

// Replaces a pure op by an earlier identical one (same op, operands, attributes and result
// type) that is visible at its position: earlier in the same block or in an enclosing one.
// Pure: the ops ops.def declares Pure (their result depends only on their operands and
// attributes) that have one result; never loads, allocations or SIMD collectives.
ir::PassResult eliminate_common_subexpressions(ir::Kernel k);

}  // namespace metile::transform
