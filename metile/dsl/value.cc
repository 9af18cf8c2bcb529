#include "metile/dsl/value.h"

#include "metile/dsl/trace_state.h"

namespace metile::dsl {

using detail::builder_at;
using detail::use;
using detail::wrap;
using ir::OpKind;

const ir::Type& Value::type() const {
  Here here = Here::current();
  return detail::current(here).core.type(use(*this, "Value", here));
}

std::vector<int64_t> Value::shape() const {
  const ir::Type& t = type();
  return t.is_tile() ? t.shape : std::vector<int64_t>{};
}

Value Value::to(DType dtype, Here here) const {
  ir::ValueId v = use(*this, "cast", here);
  return wrap(builder_at(here).cast(v, dtype));
}

Value Value::col(Here here) const {
  ir::ValueId v = use(*this, "expand_dims", here);
  return wrap(builder_at(here).expand_dims(v, 1));
}

Value Value::row(Here here) const {
  ir::ValueId v = use(*this, "expand_dims", here);
  return wrap(builder_at(here).expand_dims(v, 0));
}

namespace {
Value arith(OpKind kind, const Operand& a, const Operand& b) {
  const Here& here = a.where();
  const std::string op(ir::op_name(kind));
  auto [x, y] = detail::resolve(a, b, op, here);
  ir::TileBuilder& bld = builder_at(here);
  const bool a_ptr = bld.type(x).pointer, b_ptr = bld.type(y).pointer;
  if (kind == OpKind::Add && (a_ptr || b_ptr))
    return wrap(a_ptr ? bld.ptr_add(x, y) : bld.ptr_add(y, x));
  if (kind == OpKind::Sub && a_ptr && !b_ptr)
    return wrap(bld.ptr_add(x, bld.unary(OpKind::Neg, y)));
  return wrap(bld.binary(kind, x, y));
}

Value compare(const char* pred, const Operand& a, const Operand& b) {
  const Here& here = a.where();
  auto [x, y] = detail::resolve(a, b, "cmp", here);
  return wrap(builder_at(here).cmp(pred, x, y));
}
}  // namespace

Value& Value::operator+=(const Operand& rhs) {
  return *this = arith(OpKind::Add, Operand(*this, rhs.where()), rhs);
}
Value& Value::operator-=(const Operand& rhs) {
  return *this = arith(OpKind::Sub, Operand(*this, rhs.where()), rhs);
}
Value& Value::operator*=(const Operand& rhs) {
  return *this = arith(OpKind::Mul, Operand(*this, rhs.where()), rhs);
}
Value& Value::operator/=(const Operand& rhs) {
  return *this = arith(OpKind::Div, Operand(*this, rhs.where()), rhs);
}

Value operator+(const Operand& a, const Operand& b) {
  return arith(OpKind::Add, a, b);
}
Value operator-(const Operand& a, const Operand& b) {
  return arith(OpKind::Sub, a, b);
}
Value operator*(const Operand& a, const Operand& b) {
  return arith(OpKind::Mul, a, b);
}
Value operator/(const Operand& a, const Operand& b) {
  return arith(OpKind::Div, a, b);
}
Value operator%(const Operand& a, const Operand& b) {
  return arith(OpKind::Rem, a, b);
}
Value operator&(const Operand& a, const Operand& b) {
  return arith(OpKind::And, a, b);
}
Value operator|(const Operand& a, const Operand& b) {
  return arith(OpKind::Or, a, b);
}
Value operator^(const Operand& a, const Operand& b) {
  return arith(OpKind::Xor, a, b);
}
Value operator<<(const Operand& a, const Operand& b) {
  return arith(OpKind::Shl, a, b);
}
Value operator>>(const Operand& a, const Operand& b) {
  return arith(OpKind::Shr, a, b);
}

Value operator-(const Operand& a) {
  ir::ValueId v = detail::materialize(a, detail::default_dtype(a), "neg", a.where());
  return wrap(builder_at(a.where()).unary(OpKind::Neg, v));
}

Value operator~(const Operand& a) {
  const Here& here = a.where();
  ir::ValueId v = detail::materialize(a, detail::default_dtype(a), "xor", here);
  ir::TileBuilder& b = builder_at(here);
  const DType t = b.type(v).dtype;
  if (ir::is_float(t) || b.type(v).pointer)
    detail::fail(here, "xor", "~ needs an integer or i1 operand, got " + b.type(v).str());
  const int64_t all_ones = ir::is_signed(t) ? -1 : ir::integer_range(t).max;
  return wrap(b.binary(OpKind::Xor, v, b.constant_int(all_ones, t)));
}

Value operator<(const Operand& a, const Operand& b) {
  return compare("lt", a, b);
}
Value operator<=(const Operand& a, const Operand& b) {
  return compare("le", a, b);
}
Value operator>(const Operand& a, const Operand& b) {
  return compare("gt", a, b);
}
Value operator>=(const Operand& a, const Operand& b) {
  return compare("ge", a, b);
}
Value operator==(const Operand& a, const Operand& b) {
  return compare("eq", a, b);
}
Value operator!=(const Operand& a, const Operand& b) {
  return compare("ne", a, b);
}

}  // namespace metile::dsl
