// Evaluation of one op on constant scalars, for canonicalize. Folding happens only where the
// result is exactly what every target computes at run time.
#pragma once

#include <optional>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::transform {

// The constant value of `op` (an arithmetic, bitwise, cmp, cast, neg or abs op) given its
// operands' constant values (attribute values: int64_t for integers and i1, double for
// floats) and dtypes; nullopt where folding would not be exact: f16/bf16 arithmetic,
// transcendental math, division by zero, overflowing conversions, NaN in min/max.
std::optional<ir::Attr> fold_constant(const ir::Op& op, const std::vector<ir::Attr>& operands,
                                      ir::DType operand_dtype, ir::DType result_dtype);

// v as a value of dtype t: integers wrapped to t's width (u32 as 0..2^32-1), i1 as 0 or 1.
int64_t wrap_integer(int64_t v, ir::DType t);

}  // namespace metile::transform
