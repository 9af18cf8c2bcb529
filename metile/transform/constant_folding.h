// Evaluation of one op on constant scalars, for canonicalize. Folding happens only where the
// result is exactly what every target computes at run time (ir::Outcome::exact).
#pragma once

#include <optional>
#include <vector>

#include "metile/ir/ir.h"

namespace metile::transform {

// The constant value of `op` given its operands' constant values (attribute values: int64_t
// for integers and i1, double for floats), all of `operand_dtype` (every op canonicalize folds
// has operands of one dtype); nullopt where the scalar evaluator (metile/ir/scalar_eval.h)
// has no exact value: f16/bf16, transcendental math, float floordiv, NaN or signed zeros in
// min/max, and the undefined cases (integer division by zero, out-of-range shifts and
// conversions, |INT_MIN|).
std::optional<ir::Attr> fold_constant(const ir::Op& op, const std::vector<ir::Attr>& operands,
                                      ir::DType operand_dtype, ir::DType result_dtype);

}  // namespace metile::transform
