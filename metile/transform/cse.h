#pragma once

#include "metile/ir/pass_result.h"

namespace metile::transform {

// Replaces a pure op by an earlier identical one (same op, operands, attributes and result
// type) that is visible at its position: earlier in the same block or in an enclosing one.
// Pure: every op without regions and with one result except loads, tensor loads, shared
// allocations and SIMD collectives (those depend on memory or on the other lanes).
ir::PassResult eliminate_common_subexpressions(ir::Kernel k);

}  // namespace metile::transform
