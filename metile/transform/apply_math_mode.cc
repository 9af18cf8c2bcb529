#include "metile/transform/apply_math_mode.h"

namespace metile::transform {

namespace {
bool has_fast_variant(ir::OpKind k) {
  using K = ir::OpKind;
  return k == K::Exp || k == K::Exp2 || k == K::Log || k == K::Sqrt || k == K::Rsqrt ||
         k == K::Tanh || k == K::Sin || k == K::Cos;
}
}  // namespace

ir::Kernel apply_math_mode(ir::Kernel kernel, bool strict, bool relaxed) {
  if (!strict && !relaxed) return kernel;
  ir::walk(kernel.body, [&](ir::Op& op) {
    if (!has_fast_variant(op.kind)) return;
    if (strict)
      op.attrs.erase("fast");
    else
      op.attrs["fast"] = int64_t{1};
  });
  return kernel;
}

}  // namespace metile::transform
