#include "metile/transform/constant_folding.h"

#include "metile/ir/scalar_eval.h"

namespace metile::transform {

std::optional<ir::Attr> fold_constant(const ir::Op& op, const std::vector<ir::Attr>& operands,
                                      ir::DType operand_dtype, ir::DType result_dtype) {
  std::vector<ir::Scalar> values;
  for (const ir::Attr& a : operands) values.push_back(ir::Scalar::of_attr(operand_dtype, a));
  const ir::Evaluation e = ir::evaluate(op.kind, op.attrs, values, result_dtype);
  if (e.outcome != ir::Outcome::exact) return std::nullopt;
  return e.value.to_attr();
}

}  // namespace metile::transform
