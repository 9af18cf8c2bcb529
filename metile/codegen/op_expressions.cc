// The expression each value-producing Metal IR op renders to (docs/metal_ir_contract.md).
#include "metile/codegen/c_emitter.h"
#include "metile/codegen/c_types.h"
#include "metile/codegen/literals.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

using K = ir::OpKind;

std::string_view axis_field(int64_t axis) {
  static constexpr std::string_view kFields[] = {".x", ".y", ".z"};
  METILE_ASSERT(axis >= 0 && axis < 3, "axis " + std::to_string(axis));
  return kFields[axis];
}

std::string_view operator_of(K kind) {
  switch (kind) {
    case K::Add:
      return " + ";
    case K::Sub:
      return " - ";
    case K::Mul:
      return " * ";
    case K::Div:
      return " / ";
    case K::Rem:
      return " % ";
    case K::And:
      return " & ";
    case K::Or:
      return " | ";
    case K::Xor:
      return " ^ ";
    case K::Shl:
      return " << ";
    case K::Shr:
      return " >> ";
    case K::PtrAdd:
      return " + ";
    default:
      return "";
  }
}

}  // namespace

std::string CEmitter::constant(const ir::Op& op) const {
  auto it = op.attrs.find("value");
  if (it == op.attrs.end()) fail(op, "needs a value attribute");
  return constant_literal(it->second, type(op.results[0]).dtype, dialect_);
}

std::string CEmitter::geometry(const ir::Op& op) const {
  // Indices into the dialect's geometry arguments (kernel_abi.h order).
  const auto& g = dialect_.table().geometry;
  std::string arg;
  switch (op.kind) {
    case K::ThreadgroupIndex:
      arg = std::string(g[0].name) + std::string(axis_field(op.int_attr("axis")));
      break;
    case K::ThreadgroupCount:
      arg = std::string(g[1].name) + std::string(axis_field(op.int_attr("axis")));
      break;
    case K::ThreadIndex:
      arg = std::string(g[2].name) + std::string(axis_field(op.int_attr("axis")));
      break;
    case K::SimdLane:
      arg = std::string(g[4].name);
      break;
    default:
      arg = std::string(g[5].name);
      break;
  }
  return dialect_.convert(std::string(dialect_.scalar_type(ir::DType::i32)), arg);
}

std::string CEmitter::call_in_float(const ir::Type& t, const std::string& fn,
                                    const std::vector<ir::ValueId>& args) const {
  const bool widen = dialect_.table().math_in_float[static_cast<int>(t.dtype)];
  std::string call = fn + "(";
  for (size_t i = 0; i < args.size(); ++i)
    call += (i ? ", " : "") +
            (widen ? dialect_.convert(float_type_name(t, dialect_), name(args[i])) : name(args[i]));
  call += ")";
  return widen ? dialect_.convert(type_name(t, dialect_), call) : call;
}

std::string CEmitter::binary(const ir::Op& op) {
  const ir::Type& t = type(op.results[0]);
  const std::string& a = name(op.operands[0]);
  const std::string& b = name(op.operands[1]);
  const bool boolean = t.dtype == ir::DType::i1;
  switch (op.kind) {
    case K::And:
      if (boolean) return a + " && " + b;
      break;
    case K::Or:
      if (boolean) return a + " || " + b;
      break;
    case K::Xor:
      if (boolean) return a + " != " + b;
      break;
    case K::Min:
      if (boolean) return a + " && " + b;
      return call_in_float(t, "min", op.operands);
    case K::Max:
      if (boolean) return a + " || " + b;
      return call_in_float(t, "max", op.operands);
    case K::Rem:
      if (ir::is_float(t.dtype)) return call_in_float(t, "fmod", op.operands);
      break;
    case K::FloorDiv:
      if (ir::is_float(t.dtype)) {
        const std::string q = a + " / " + b;
        return dialect_.table().math_in_float[static_cast<int>(t.dtype)]
                   ? dialect_.convert(
                         type_name(t, dialect_),
                         "floor(" + dialect_.convert(float_type_name(t, dialect_), q) + ")")
                   : "floor(" + q + ")";
      }
      if (!ir::is_signed(t.dtype)) return a + " / " + b;  // truncation is the floor
      if (!t.is_scalar()) fail(op, "integer vectors are not supported (only scalars)");
      return prelude_.floordiv(t.dtype, a, b);
    default:
      break;
  }
  return a + std::string(operator_of(op.kind)) + b;
}

std::string CEmitter::compare(const ir::Op& op) const {
  static constexpr std::pair<std::string_view, std::string_view> kPreds[] = {
      {"lt", " < "}, {"le", " <= "}, {"gt", " > "}, {"ge", " >= "}, {"eq", " == "}, {"ne", " != "}};
  const std::string& pred = op.str_attr("pred");
  for (const auto& [p, c_op] : kPreds)
    if (pred == p) return name(op.operands[0]) + std::string(c_op) + name(op.operands[1]);
  fail(op, "unknown predicate '" + pred + "'");
}

std::string CEmitter::select(const ir::Op& op) const {
  const std::string& c = name(op.operands[0]);
  const std::string& a = name(op.operands[1]);
  const std::string& b = name(op.operands[2]);
  // A per-element condition needs the language's select; ?: wants one condition.
  if (type(op.operands[0]).is_vector())
    return std::string(dialect_.table().vector_select) + "(" + b + ", " + a + ", " + c + ")";
  return c + " ? " + a + " : " + b;
}

std::string CEmitter::cast(const ir::Op& op) const {
  const ir::Type& from = type(op.operands[0]);
  const ir::Type& to = type(op.results[0]);
  if (from == to) return name(op.operands[0]);
  std::string value = name(op.operands[0]);
  // bfloat converts only to and from float, so other conversions pass through float.
  const bool via_float = (from.dtype == ir::DType::bf16 || to.dtype == ir::DType::bf16) &&
                         from.dtype != ir::DType::f32 && to.dtype != ir::DType::f32;
  if (via_float) value = "static_cast<" + float_type_name(from, dialect_) + ">(" + value + ")";
  return "static_cast<" + type_name(to, dialect_) + ">(" + value + ")";
}

std::string CEmitter::unary(const ir::Op& op) const {
  const ir::Type& t = type(op.results[0]);
  if (op.kind == K::Neg) return "-" + name(op.operands[0]);
  if (op.kind == K::Abs) return call_in_float(t, "abs", op.operands);
  const DialectTable& d = dialect_.table();
  const bool fast = op.int_attr_or("fast", 0) != 0;
  const std::string fn = std::string(fast ? d.fast_math_prefix : d.precise_math_prefix) +
                         std::string(ir::op_name(op.kind));
  return call_in_float(t, fn, op.operands);
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

std::string CEmitter::load(const ir::Op& op) const {
  const std::string value = access(op.operands[0], type(op.results[0]));
  if (op.operands.size() == 1) return value;
  return name(op.operands[1]) + " ? " + value + " : " + name(op.operands[2]);
}

std::string CEmitter::threadgroup_buffer(const ir::Op& op) const {
  return "(" + type_of(op.results[0]) + ")(tg_mem + " + std::to_string(op.int_attr("offset")) + ")";
}

std::string CEmitter::simd(const ir::Op& op) const {
  const DialectTable& d = dialect_.table();
  const ir::Type& t = type(op.results[0]);
  if (t.dtype == ir::DType::i64 || t.dtype == ir::DType::i1)
    fail(op, std::string(ir::dtype_name(t.dtype)) + " values are not supported by " +
                 std::string(d.language) + " SIMD-group functions");
  std::string_view fn;
  switch (op.kind) {
    case K::SimdSum:
      fn = d.simd_sum;
      break;
    case K::SimdMax:
      fn = d.simd_max;
      break;
    case K::SimdMin:
      fn = d.simd_min;
      break;
    case K::SimdShuffle:
      fn = d.simd_shuffle;
      break;
    case K::SimdShuffleXor:
      fn = d.simd_shuffle_xor;
      break;
    default:
      fn = d.simd_broadcast;
      break;
  }
  // bfloat is not among the SIMD-group functions' types; it goes through float.
  const bool widen = t.dtype == ir::DType::bf16;
  std::string value = name(op.operands[0]);
  if (widen) value = dialect_.convert(float_type_name(t, dialect_), value);
  std::string call = std::string(fn) + "(" + value;
  if (op.operands.size() == 2)
    call += ", " + dialect_.convert(std::string(d.lane_type), name(op.operands[1]));
  call += ")";
  return widen ? dialect_.convert(type_name(t, dialect_), call) : call;
}

}  // namespace metile::codegen
