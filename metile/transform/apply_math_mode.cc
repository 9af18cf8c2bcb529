#include "metile/transform/apply_math_mode.h"

namespace metile::transform {

namespace {
bool has_fast_variant(ir::OpKind k) {
  using K = ir::OpKind;
  return k == K::Exp || k == K::Exp2 || k == K::Log || k == K::Sqrt || k == K::Rsqrt ||
         k == K::Tanh || k == K::Sin || k == K::Cos;
}
}  // namespace

ir::PassResult apply_math_mode(ir::Kernel kernel, bool strict, bool relaxed) {
  if (!strict && !relaxed) return {std::move(kernel), false};
  bool changed = false;
  ir::walk(kernel.body, [&](ir::Op& op) {
    if (!has_fast_variant(op.kind)) return;
    const ir::Attr fast = int64_t{1};
    auto it = op.attrs.find("fast");
    if (strict && it != op.attrs.end()) {
      op.attrs.erase(it);
      changed = true;
    } else if (relaxed && (it == op.attrs.end() || it->second != fast)) {
      op.attrs["fast"] = fast;
      changed = true;
    }
  });
  return {std::move(kernel), changed};
}

}  // namespace metile::transform
