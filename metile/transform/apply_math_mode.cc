#include "metile/transform/apply_math_mode.h"

namespace metile::transform {

namespace {
bool has_fast_variant(ir::OpKind k) {
  using K = ir::OpKind;
  return k == K::Exp || k == K::Exp2 || k == K::Log || k == K::Sqrt || k == K::Rsqrt ||
         k == K::Tanh || k == K::Sin || k == K::Cos;
}

// STRICT_MATH computes every product exactly (ieee); RELAXED_PRECISION lets an f32 dot whose
// author left the precision open use TF32 (Triton's input_precision default).
void apply_to_dot(const ir::Kernel& kernel, ir::Op& dot, bool strict, bool& changed) {
  if (strict) {
    changed |= dot.attrs.erase("precision") != 0;
  } else if (!dot.has_attr("precision") && kernel.type(dot.operands[0]).dtype == ir::DType::f32) {
    dot.attrs["precision"] = std::string("tf32");
    changed = true;
  }
}
}  // namespace

ir::PassResult apply_math_mode(ir::Kernel kernel, bool strict, bool relaxed) {
  if (!strict && !relaxed) return {std::move(kernel), false};
  bool changed = false;
  ir::walk(kernel.body, [&](ir::Op& op) {
    if (op.kind == ir::OpKind::Dot) return apply_to_dot(kernel, op, strict, changed);
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
