#include "metile/dsl/ops.h"

#include "metile/dsl/trace_state.h"

namespace metile::dsl {

using detail::builder_at;
using detail::use;
using detail::wrap;
using ir::OpKind;

Scalar program_id(int axis, Here here) {
  return wrap(builder_at(here).program_id(axis));
}
Scalar num_programs(int axis, Here here) {
  return wrap(builder_at(here).num_programs(axis));
}
Scalar thread_id(int axis, Here here) {
  return wrap(builder_at(here).thread_id(axis));
}

Tile arange(int64_t start, int64_t end, Here here) {
  return wrap(builder_at(here).arange(start, end));
}

Tile arange(int64_t start, int64_t end, const ThreadLayout& layout, Here here) {
  return wrap(builder_at(here).arange(start, end, layout));
}

Tile zeros(const Shape& shape, DType dtype, Here here) {
  return wrap(builder_at(here).zeros(shape, dtype));
}

Tile full(const Shape& shape, double value, DType dtype, Here here) {
  return wrap(builder_at(here).full(shape, value, dtype));
}

Tile splat(const Value& value, const Shape& shape, Here here) {
  ir::ValueId v = use(value, "splat", here);
  return wrap(builder_at(here).splat(v, shape));
}

Tile expand_dims(const Value& tile, int axis, Here here) {
  ir::ValueId v = use(tile, "expand_dims", here);
  return wrap(builder_at(here).expand_dims(v, axis));
}

Tile col(const Value& tile, Here here) {
  return expand_dims(tile, 1, here);
}
Tile row(const Value& tile, Here here) {
  return expand_dims(tile, 0, here);
}

Tile broadcast_to(const Value& value, const Shape& shape, Here here) {
  ir::ValueId v = use(value, "broadcast", here);
  return wrap(builder_at(here).broadcast_to(v, shape));
}

Tile convert_layout(const Value& tile, const ThreadLayout& layout, Here here) {
  ir::ValueId v = use(tile, "convert_layout", here);
  return wrap(builder_at(here).convert_layout(v, layout));
}

Value cast(const Value& value, DType dtype, Here here) {
  return value.to(dtype, here);
}

Value where(const Value& cond, const Operand& a, const Operand& b, Here here) {
  ir::ValueId c = use(cond, "select", here);
  auto [x, y] = detail::resolve(a, b, "select", here);
  return wrap(builder_at(here).select(c, x, y));
}

namespace {
Value binary(OpKind kind, const Operand& a, const Operand& b, const Here& here) {
  auto [x, y] = detail::resolve(a, b, std::string(ir::op_name(kind)), here);
  return wrap(builder_at(here).binary(kind, x, y));
}

Value math(OpKind kind, const Value& x, bool fast, const Here& here) {
  ir::ValueId v = use(x, std::string(ir::op_name(kind)), here);
  return wrap(builder_at(here).unary(kind, v, fast));
}

Scalar reduce(const char* kind, const Value& tile, const Here& here) {
  ir::ValueId v = use(tile, kind, here);
  return wrap(builder_at(here).reduce(kind, v));
}

Tile reduce_axis(const char* kind, const Value& tile, int axis, const Here& here) {
  ir::ValueId v = use(tile, kind, here);
  return wrap(builder_at(here).reduce_axis(kind, v, axis));
}

Scalar simd(OpKind kind, const Value& x, const Operand& lane, const Here& here) {
  const std::string op(ir::op_name(kind));
  ir::ValueId v = use(x, op, here);
  ir::ValueId l = lane.present() ? detail::materialize(lane, DType::i32, op, here) : ir::kNoValue;
  return wrap(builder_at(here).simd(kind, v, l));
}
}  // namespace

Value minimum(const Operand& a, const Operand& b, Here here) {
  return binary(OpKind::Min, a, b, here);
}
Value maximum(const Operand& a, const Operand& b, Here here) {
  return binary(OpKind::Max, a, b, here);
}
Value min(const Operand& a, const Operand& b, Here here) {
  return binary(OpKind::Min, a, b, here);
}
Value max(const Operand& a, const Operand& b, Here here) {
  return binary(OpKind::Max, a, b, here);
}
Value floordiv(const Operand& a, const Operand& b, Here here) {
  return binary(OpKind::FloorDiv, a, b, here);
}

Value exp(const Value& x, Here here) {
  return math(OpKind::Exp, x, false, here);
}
Value exp2(const Value& x, Here here) {
  return math(OpKind::Exp2, x, false, here);
}
Value log(const Value& x, Here here) {
  return math(OpKind::Log, x, false, here);
}
Value sqrt(const Value& x, Here here) {
  return math(OpKind::Sqrt, x, false, here);
}
Value rsqrt(const Value& x, Here here) {
  return math(OpKind::Rsqrt, x, false, here);
}
Value tanh(const Value& x, Here here) {
  return math(OpKind::Tanh, x, false, here);
}
Value sin(const Value& x, Here here) {
  return math(OpKind::Sin, x, false, here);
}
Value cos(const Value& x, Here here) {
  return math(OpKind::Cos, x, false, here);
}
Value abs(const Value& x, Here here) {
  return math(OpKind::Abs, x, false, here);
}
Value fast_exp(const Value& x, Here here) {
  return math(OpKind::Exp, x, true, here);
}
Value fast_exp2(const Value& x, Here here) {
  return math(OpKind::Exp2, x, true, here);
}
Value fast_log(const Value& x, Here here) {
  return math(OpKind::Log, x, true, here);
}
Value fast_sqrt(const Value& x, Here here) {
  return math(OpKind::Sqrt, x, true, here);
}
Value fast_rsqrt(const Value& x, Here here) {
  return math(OpKind::Rsqrt, x, true, here);
}
Value fast_tanh(const Value& x, Here here) {
  return math(OpKind::Tanh, x, true, here);
}
Value fast_sin(const Value& x, Here here) {
  return math(OpKind::Sin, x, true, here);
}
Value fast_cos(const Value& x, Here here) {
  return math(OpKind::Cos, x, true, here);
}

Value load(const Value& ptr, const Value& mask, const Operand& other,
           const std::string& eviction_policy, Here here) {
  ir::ValueId p = use(ptr, "load", here);
  ir::ValueId m = mask.valid() ? use(mask, "load", here) : ir::kNoValue;
  ir::ValueId o = ir::kNoValue;
  if (other.present()) o = detail::materialize(other, builder_at(here).type(p).dtype, "load", here);
  return wrap(builder_at(here).load(p, m, o, eviction_policy));
}

void store(const Value& ptr, const Operand& value, const Value& mask,
           const std::string& eviction_policy, Here here) {
  ir::ValueId p = use(ptr, "store", here);
  ir::ValueId v = detail::materialize(value, builder_at(here).type(p).dtype, "store", here);
  ir::ValueId m = mask.valid() ? use(mask, "store", here) : ir::kNoValue;
  builder_at(here).store(p, v, m, eviction_policy);
}

Ptr shared(int64_t size, DType dtype, Here here) {
  return wrap(builder_at(here).shared_alloc(size, dtype));
}

Scalar sum(const Value& tile, Here here) {
  return reduce("sum", tile, here);
}
Scalar max(const Value& tile, Here here) {
  return reduce("max", tile, here);
}
Scalar min(const Value& tile, Here here) {
  return reduce("min", tile, here);
}
Tile sum_axis(const Value& tile, int axis, Here here) {
  return reduce_axis("sum", tile, axis, here);
}
Tile max_axis(const Value& tile, int axis, Here here) {
  return reduce_axis("max", tile, axis, here);
}
Tile min_axis(const Value& tile, int axis, Here here) {
  return reduce_axis("min", tile, axis, here);
}

Tile dot(const Value& a, const Value& b, const Value& acc, const std::string& precision,
         Here here) {
  const ir::ValueId x = use(a, "dot", here), y = use(b, "dot", here), z = use(acc, "dot", here);
  return wrap(builder_at(here).dot(x, y, z, precision));
}

Scalar simd_sum(const Value& x, Here here) {
  return simd(OpKind::SimdSum, x, Operand(), here);
}
Scalar simd_max(const Value& x, Here here) {
  return simd(OpKind::SimdMax, x, Operand(), here);
}
Scalar simd_min(const Value& x, Here here) {
  return simd(OpKind::SimdMin, x, Operand(), here);
}
Scalar simd_shuffle(const Value& x, const Operand& lane, Here here) {
  return simd(OpKind::SimdShuffle, x, lane, here);
}
Scalar simd_shuffle_xor(const Value& x, const Operand& mask, Here here) {
  return simd(OpKind::SimdShuffleXor, x, mask, here);
}
Scalar simd_broadcast(const Value& x, const Operand& lane, Here here) {
  return simd(OpKind::SimdBroadcast, x, lane, here);
}
Scalar simd_shuffle_down(const Value& x, const Operand& delta, Here here) {
  return simd(OpKind::SimdShuffleDown, x, delta, here);
}

void barrier(Here here) {
  builder_at(here).barrier();
}

}  // namespace metile::dsl
