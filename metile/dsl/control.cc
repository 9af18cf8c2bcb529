#include "metile/dsl/control.h"

#include "metile/dsl/trace_state.h"

namespace metile::dsl::detail {

namespace {
std::vector<ir::ValueId> ids(const std::vector<Value>& values, const std::string& op,
                             const Here& here) {
  std::vector<ir::ValueId> r;
  for (const Value& v : values) r.push_back(use(v, op, here));
  return r;
}
}  // namespace

LoopFrame begin_loop(const Operand& start, const Operand& end, const Operand& step,
                     const std::vector<Value>& init, const Here& here) {
  TraceState& s = current(here);
  // A loop by zero or a negative step never reaches its end.
  if (step.is_number() && step.float_number() <= 0)
    fail(here, "tile_range",
         "the step must be positive, got " + (step.is_float_number()
                                                  ? std::to_string(step.float_number())
                                                  : std::to_string(step.int_number())));
  // Numbers among the bounds adopt the dtype of the first Value bound (i32 if none).
  DType bound_dtype = DType::i32;
  for (const Operand* b : {&step, &end, &start})
    if (b->is_value()) bound_dtype = dtype_for_numbers(b->value());
  ir::ValueId lo = materialize(start, bound_dtype, "tile_range", here);
  ir::ValueId hi = materialize(end, bound_dtype, "tile_range", here);
  ir::ValueId by = materialize(step, bound_dtype, "tile_range", here);
  std::vector<ir::ValueId> inits = ids(init, "tile_range", here);
  ir::Builder::ForScope scope = core_at(s, here).begin_for(lo, hi, by, inits, "a tile_range body");
  return {wrap(scope.induction_var), wrap_all(scope.carried)};
}

std::vector<Value> end_loop(const std::vector<Value>& yields, const Here& here) {
  TraceState& s = current(here);
  std::vector<ir::ValueId> ys = ids(yields, "tile_range", here);
  return wrap_all(core_at(s, here).end_for(ys));
}

void begin_if(const Value& cond, const Here& here) {
  TraceState& s = current(here);
  ir::ValueId c = use(cond, "if", here);
  core_at(s, here).begin_if(c, "the then-branch of an if_");
}

void begin_else(const std::vector<Value>& then_yields, const Here& here) {
  TraceState& s = current(here);
  std::vector<ir::ValueId> ys = ids(then_yields, "if", here);
  core_at(s, here).begin_else(ys, "the else-branch of an if_");
}

std::vector<Value> end_if(const std::vector<Value>& else_yields, const Here& here) {
  TraceState& s = current(here);
  std::vector<ir::ValueId> ys = ids(else_yields, "if", here);
  return wrap_all(core_at(s, here).end_if(ys));
}

}  // namespace metile::dsl::detail
