#include "metile/dsl/control.h"

#include "metile/dsl/trace_state.h"

namespace metile::dsl::detail {

namespace {
ir::ValueId next_id(const TraceState& s) {
  return static_cast<ir::ValueId>(s.kernel.types.size());
}

std::vector<ir::ValueId> ids(const std::vector<Value>& values, const std::string& op,
                             const Here& here) {
  std::vector<ir::ValueId> r;
  for (const Value& v : values) r.push_back(use(v, op, here));
  return r;
}

// Closes the innermost open region: its values may no longer be used.
void close_region(TraceState& s, ir::ValueId end, const char* what) {
  s.closed.push_back({s.open.back().first, end, what});
  s.open.pop_back();
}
}  // namespace

LoopFrame begin_loop(const Operand& start, const Operand& end, const Operand& step,
                     const std::vector<Value>& init, const Here& here) {
  TraceState& s = current(here);
  // Numbers among the bounds adopt the dtype of the first Value bound (i32 if none).
  DType bound_dtype = DType::i32;
  for (const Operand* b : {&step, &end, &start})
    if (b->is_value()) bound_dtype = dtype_for_numbers(b->value());
  ir::ValueId lo = materialize(start, bound_dtype, "tile_range", here);
  ir::ValueId hi = materialize(end, bound_dtype, "tile_range", here);
  ir::ValueId by = materialize(step, bound_dtype, "tile_range", here);
  std::vector<ir::ValueId> inits = ids(init, "tile_range", here);
  TraceState::OpenRegion region{next_id(s), {}};
  for (ir::ValueId v : inits) region.carried_types.push_back(s.kernel.type(v));
  ir::Builder::ForScope scope = builder_at(here).begin_for(lo, hi, by, inits);
  s.open.push_back(std::move(region));
  return {wrap(scope.induction_var), wrap_all(scope.carried)};
}

std::vector<Value> end_loop(const std::vector<Value>& yields, const Here& here) {
  TraceState& s = current(here);
  std::vector<ir::ValueId> ys = ids(yields, "tile_range", here);
  const std::vector<ir::Type>& types = s.open.back().carried_types;
  for (size_t i = 0; i < ys.size(); ++i)
    if (s.kernel.type(ys[i]) != types[i])
      fail(here, "tile_range",
           "loop-carried value " + std::to_string(i) + " changes type from " + types[i].str() +
               " to " + s.kernel.type(ys[i]).str() +
               " in the loop body; a carried value keeps one type (start tile state with "
               "full(shape, value, dtype), or cast)");
  ir::ValueId end = next_id(s);
  std::vector<ir::ValueId> results = builder_at(here).end_for(ys);
  close_region(s, end, "a tile_range body");
  return wrap_all(results);
}

void begin_if(const Value& cond, const Here& here) {
  TraceState& s = current(here);
  ir::ValueId c = use(cond, "if", here);
  builder_at(here).begin_if(c);
  s.open.push_back({next_id(s), {}});
}

void begin_else(const std::vector<Value>& then_yields, const Here& here) {
  TraceState& s = current(here);
  std::vector<ir::ValueId> ys = ids(then_yields, "if", here);
  ir::ValueId end = next_id(s);
  builder_at(here).begin_else(ys);
  close_region(s, end, "the then-branch of an if_");
  s.open.push_back({next_id(s), {}});
}

std::vector<Value> end_if(const std::vector<Value>& else_yields, const Here& here) {
  TraceState& s = current(here);
  std::vector<ir::ValueId> ys = ids(else_yields, "if", here);
  ir::ValueId end = next_id(s);
  std::vector<ir::ValueId> results = builder_at(here).end_if(ys);
  close_region(s, end, "the else-branch of an if_");
  return wrap_all(results);
}

}  // namespace metile::dsl::detail
