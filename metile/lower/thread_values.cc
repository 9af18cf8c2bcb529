#include "metile/lower/thread_values.h"

#include <variant>
#include <vector>

#include "metile/ir/scalar_eval.h"

namespace metile::lower {

std::optional<int64_t> thread_value(const ir::Kernel& k,
                                    const std::function<const ir::Op*(ir::ValueId)>& definer,
                                    int simd_width, ir::ValueId v, int64_t t,
                                    ThreadValueMemo& memo) {
  if (const auto it = memo.find(v); it != memo.end()) return it->second;
  std::optional<int64_t> result;
  const ir::Op* def = definer(v);
  const bool integer = !ir::is_float(k.type(v).dtype);
  if (def && def->kind == ir::OpKind::ThreadIndex) result = t;
  if (def && def->kind == ir::OpKind::SimdLane) result = t % simd_width;
  if (def && def->kind == ir::OpKind::SimdGroup) result = t / simd_width;
  // simd_broadcast(x, lane): x in the SIMD group's thread `lane` (its own memo: another
  // thread's values).
  if (def && def->kind == ir::OpKind::SimdBroadcast && integer) {
    const std::optional<int64_t> lane =
        thread_value(k, definer, simd_width, def->operands[1], t, memo);
    if (lane && *lane >= 0 && *lane < simd_width) {
      ThreadValueMemo source;
      result = thread_value(k, definer, simd_width, def->operands[0], t - t % simd_width + *lane,
                            source);
    }
  }
  if (def && def->kind == ir::OpKind::Constant && integer)
    result = std::get<int64_t>(def->attrs.at("value"));
  if (def && def->kind != ir::OpKind::Constant && ir::scalar_op(def->kind) && integer) {
    std::vector<ir::Scalar> operands;
    bool known = true;
    for (ir::ValueId o : def->operands) {
      const std::optional<int64_t> x = thread_value(k, definer, simd_width, o, t, memo);
      known = known && x && !ir::is_float(k.type(o).dtype);
      if (known) operands.push_back(ir::Scalar::of(k.type(o).dtype, *x));
    }
    if (known) {
      const ir::Evaluation e = ir::evaluate(def->kind, def->attrs, operands, k.type(v).dtype);
      if (e.outcome == ir::Outcome::exact) result = e.value.i;
    }
  }
  memo[v] = result;
  return result;
}

}  // namespace metile::lower
