// The expression each value-producing Metal IR op renders to (docs/metal_ir_contract.md):
// which operands go where, and what each dtype needs; the words and call shapes come from
// the dialect's hooks (dialect.h).
#include <utility>

#include "metile/codegen/c_emitter.h"
#include "metile/codegen/c_types.h"
#include "metile/codegen/literals.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

std::string_view axis_field(int64_t axis) {
  static constexpr std::string_view kFields[] = {".x", ".y", ".z"};
  METILE_ASSERT(axis >= 0 && axis < 3, "axis " + std::to_string(axis));
  return kFields[axis];
}

}  // namespace

std::string CEmitter::constant(const ir::Op& op) const {
  auto it = op.attrs.find("value");
  if (it == op.attrs.end()) fail(op, "needs a value attribute");
  return constant_literal(it->second, type(op.results[0]).dtype, dialect_);
}

std::string CEmitter::geometry(const ir::Op& op, Geometry g) const {
  std::string value(dialect_.table().geometry[static_cast<size_t>(g)].name);
  if (g != Geometry::SimdLane && g != Geometry::SimdGroup) value += axis_field(op.int_attr("axis"));
  return dialect_.convert(std::string(dialect_.scalar_type(ir::DType::i32)), value);
}

std::string CEmitter::infix(const ir::Op& op, std::string_view c_op) const {
  return dialect_.infix(c_op, type(op.operands[0]), name(op.operands[0]), name(op.operands[1]));
}

std::string CEmitter::bitwise(const ir::Op& op, std::string_view c_op,
                              std::string_view bool_op) const {
  return infix(op, type(op.results[0]).dtype == ir::DType::i1 ? bool_op : c_op);
}

std::string CEmitter::min_max(const ir::Op& op, MathFn fn, std::string_view bool_op) {
  const ir::Type& t = type(op.results[0]);
  if (t.dtype == ir::DType::i1) return infix(op, bool_op);
  return dialect_.math_call(fn, false, t, {name(op.operands[0]), name(op.operands[1])}, prelude_);
}

std::string CEmitter::rem(const ir::Op& op) {
  const ir::Type& t = type(op.results[0]);
  if (!ir::is_float(t.dtype)) return infix(op, "%");
  return dialect_.math_call(MathFn::Fmod, false, t, {name(op.operands[0]), name(op.operands[1])},
                            prelude_);
}

std::string CEmitter::floordiv(const ir::Op& op) {
  const ir::Type& t = type(op.results[0]);
  if (ir::is_float(t.dtype))
    return dialect_.math_call(MathFn::Floor, false, t, {infix(op, "/")}, prelude_);
  if (!ir::is_signed(t.dtype)) return infix(op, "/");  // truncation is the floor
  if (!t.is_scalar()) fail(op, "integer vectors are not supported (only scalars)");
  return dialect_.integer_floordiv(t.dtype, name(op.operands[0]), name(op.operands[1]), prelude_);
}

std::string CEmitter::compare(const ir::Op& op) const {
  static constexpr std::pair<std::string_view, std::string_view> kPreds[] = {
      {"lt", "<"}, {"le", "<="}, {"gt", ">"}, {"ge", ">="}, {"eq", "=="}, {"ne", "!="}};
  const std::string& pred = op.str_attr("pred");
  for (const auto& [p, c_op] : kPreds)
    if (pred == p) return infix(op, c_op);
  fail(op, "unknown predicate '" + pred + "'");
}

std::string CEmitter::select(const ir::Op& op) const {
  return dialect_.select(type(op.operands[0]), name(op.operands[0]), name(op.operands[1]),
                         name(op.operands[2]));
}

std::string CEmitter::cast(const ir::Op& op) {
  const ir::Type& from = type(op.operands[0]);
  const ir::Type& to = type(op.results[0]);
  if (from == to) return name(op.operands[0]);
  // Triton's int_to_ptr and ptr_to_int: the address as it is.
  if (from.pointer || to.pointer)
    return "((" + type_name(to, dialect_) + ")(" + name(op.operands[0]) + "))";
  return dialect_.cast(from, to, name(op.operands[0]), prelude_);
}

void CEmitter::emit_inline_asm(const ir::Op& op) {
  const ir::ValueId r = op.results[0];
  std::vector<std::pair<std::string, ir::Type>> operands;
  for (ir::ValueId v : op.operands) operands.emplace_back(name(v), type(v));
  const std::string statement =
      dialect_.inline_asm(name(r), type(r), operands, op.str_attr("asm"),
                          op.str_attr("constraints"), op.int_attr("pure") != 0);
  line(type_of(r) + " " + name(r) + ";");
  line(statement);
}

std::string CEmitter::negate(const ir::Op& op) const {
  return dialect_.prefix("-", type(op.operands[0]), name(op.operands[0]));
}

std::string CEmitter::math(const ir::Op& op, MathFn fn) {
  const bool fast = op.int_attr_or("fast", 0) != 0;
  return dialect_.math_call(fn, fast, type(op.results[0]), {name(op.operands[0])}, prelude_);
}

std::string CEmitter::access(ir::ValueId ptr, const ir::Type& value_type) const {
  if (!value_type.is_vector()) return name(ptr) + "[0]";
  // A vector access reads the contiguous elements at ptr as one vector.
  const ir::Type& p = type(ptr);
  const DialectTable& d = dialect_.table();
  const std::string space(p.space == ir::AddressSpace::Threadgroup ? d.threadgroup_space
                                                                   : d.device_space);
  return "((" + space + (read_only_.count(ptr) ? "const " : "") + type_name(value_type, dialect_) +
         "*)(" + name(ptr) + "))[0]";
}

std::string CEmitter::packed_type(const ir::Type& vector) {
  return dialect_.packed_vector_type(vector.dtype, vector.shape.at(0), prelude_);
}

std::string CEmitter::extract(const ir::Op& op) const {
  return dialect_.packed_element(type(op.operands[0]).dtype, name(op.operands[0]),
                                 op.int_attr("index"));
}

std::string CEmitter::load(const ir::Op& op) {
  const ir::Type& t = type(op.results[0]);
  const std::optional<std::string> hinted = hinted_load(op, type_name(t, dialect_));
  const std::string value = hinted ? *hinted : access(op.operands[0], t);
  if (op.operands.size() == 1) return value;
  return name(op.operands[1]) + " ? " + value + " : " + name(op.operands[2]);
}

std::optional<std::string> CEmitter::hinted_load(const ir::Op& op, const std::string& type) {
  if (!op.has_attr("eviction")) return std::nullopt;
  return dialect_.hinted_load(type, name(op.operands[0]), op.str_attr("eviction"), prelude_);
}

std::optional<std::string> CEmitter::hinted_store(const ir::Op& op, const std::string& type,
                                                  const std::string& value) {
  if (!op.has_attr("eviction")) return std::nullopt;
  return dialect_.hinted_store(type, name(op.operands[0]), value, op.str_attr("eviction"),
                               prelude_);
}

std::string CEmitter::threadgroup_buffer(const ir::Op& op) const {
  return "(" + type_of(op.results[0]) + ")(" + std::string(dialect_.table().block_name) + " + " +
         std::to_string(op.int_attr("offset")) + ")";
}

std::string CEmitter::collective(const ir::Op& op, Collective c) {
  const DialectTable& d = dialect_.table();
  const ir::Type& t = type(op.results[0]);
  if (d.collective_routes[static_cast<int>(t.dtype)] == Route::Unsupported)
    fail(op, std::string(ir::dtype_name(t.dtype)) + " values are not supported by " +
                 std::string(d.language) + " SIMD-group functions");
  const std::string lane = op.operands.size() == 2 ? name(op.operands[1]) : "";
  return dialect_.collective(c, t, name(op.operands[0]), lane, prelude_);
}

}  // namespace metile::codegen
