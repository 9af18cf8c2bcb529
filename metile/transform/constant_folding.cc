#include "metile/transform/constant_folding.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace metile::transform {

using ir::DType;
using ir::OpKind;

int64_t wrap_integer(int64_t v, DType t) {
  switch (t) {
    case DType::i32:
      return static_cast<int32_t>(static_cast<uint32_t>(v));
    case DType::u32:
      return static_cast<uint32_t>(v);
    case DType::i1:
      return v & 1;
    default:
      return v;
  }
}

namespace {

int64_t as_int(const ir::Attr& a) {
  if (auto* i = std::get_if<int64_t>(&a)) return *i;
  return static_cast<int64_t>(std::get<double>(a));
}

// f32 constants hold doubles; the target rounds them to float once.
float as_float(const ir::Attr& a) {
  if (auto* i = std::get_if<int64_t>(&a)) return static_cast<float>(*i);
  return static_cast<float>(std::get<double>(a));
}

bool compare(const std::string& pred, auto a, auto b) {
  if (pred == "lt") return a < b;
  if (pred == "le") return a <= b;
  if (pred == "gt") return a > b;
  if (pred == "ge") return a >= b;
  if (pred == "eq") return a == b;
  return a != b;
}

int bits(DType t) {
  return t == DType::i64 ? 64 : t == DType::i1 ? 1 : 32;
}

std::optional<int64_t> fold_int_binary(OpKind k, int64_t a, int64_t b, DType t) {
  const bool is_unsigned = t == DType::u32 || t == DType::i1;
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  const int64_t min =
      t == DType::i64 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int32_t>::min();
  const bool bad_division = b == 0 || (!is_unsigned && a == min && b == -1);
  switch (k) {
    case OpKind::Add:
      return static_cast<int64_t>(ua + ub);
    case OpKind::Sub:
      return static_cast<int64_t>(ua - ub);
    case OpKind::Mul:
      return static_cast<int64_t>(ua * ub);
    case OpKind::Div:
      if (bad_division) return std::nullopt;
      return a / b;
    case OpKind::Rem:
      if (bad_division) return std::nullopt;
      return a % b;
    case OpKind::FloorDiv:
      if (bad_division) return std::nullopt;
      return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
    case OpKind::Min:
      return std::min(a, b);
    case OpKind::Max:
      return std::max(a, b);
    case OpKind::And:
      return a & b;
    case OpKind::Or:
      return a | b;
    case OpKind::Xor:
      return a ^ b;
    case OpKind::Shl:
      if (b < 0 || b >= bits(t)) return std::nullopt;
      return static_cast<int64_t>(ua << b);
    case OpKind::Shr:
      if (b < 0 || b >= bits(t)) return std::nullopt;
      return a >> b;  // a is wrapped: non-negative for unsigned types, so this is logical
    default:
      return std::nullopt;
  }
}

std::optional<double> fold_float_binary(OpKind k, float a, float b) {
  switch (k) {
    case OpKind::Add:
      return a + b;
    case OpKind::Sub:
      return a - b;
    case OpKind::Mul:
      return a * b;
    case OpKind::Div:
      return a / b;
    case OpKind::Rem:
      return std::fmod(a, b);
    case OpKind::Min:
    case OpKind::Max:
      // NaN and signed zeros are where min/max implementations differ.
      if (std::isnan(a) || std::isnan(b) || a == b) return std::nullopt;
      return k == OpKind::Min ? std::min(a, b) : std::max(a, b);
    default:
      return std::nullopt;
  }
}

std::optional<ir::Attr> fold_cast(const ir::Attr& v, DType from, DType to) {
  if (to == DType::f16 || to == DType::bf16 || from == DType::f16 || from == DType::bf16)
    return std::nullopt;
  if (ir::is_float(from)) {
    const float f = as_float(v);
    if (to == DType::f32) return static_cast<double>(f);
    if (to == DType::i1) return int64_t{f != 0.0f};
    const double lo = to == DType::u32 ? 0.0 : to == DType::i32 ? -2147483648.0 : -9.2e18;
    const double hi = to == DType::u32 ? 4294967295.0 : to == DType::i32 ? 2147483647.0 : 9.2e18;
    if (std::isnan(f) || std::trunc(f) < lo || std::trunc(f) > hi) return std::nullopt;
    return static_cast<int64_t>(std::trunc(f));
  }
  const int64_t i = wrap_integer(as_int(v), from);
  if (to == DType::f32) return static_cast<double>(static_cast<float>(i));
  if (to == DType::i1) return int64_t{i != 0};
  return wrap_integer(i, to);
}

}  // namespace

std::optional<ir::Attr> fold_constant(const ir::Op& op, const std::vector<ir::Attr>& operands,
                                      DType operand_dtype, DType result_dtype) {
  if (op.kind == OpKind::Cast) return fold_cast(operands[0], operand_dtype, result_dtype);
  if (operand_dtype == DType::f16 || operand_dtype == DType::bf16) return std::nullopt;
  const bool floats = ir::is_float(operand_dtype);
  if (op.kind == OpKind::Cmp) {
    const std::string& pred = op.str_attr("pred");
    if (floats) return int64_t{compare(pred, as_float(operands[0]), as_float(operands[1]))};
    int64_t a = wrap_integer(as_int(operands[0]), operand_dtype);
    int64_t b = wrap_integer(as_int(operands[1]), operand_dtype);
    return int64_t{compare(pred, a, b)};
  }
  if (op.kind == OpKind::Neg || op.kind == OpKind::Abs) {
    if (floats) {
      float a = as_float(operands[0]);
      return static_cast<double>(op.kind == OpKind::Neg ? -a : std::fabs(a));
    }
    const int64_t a = wrap_integer(as_int(operands[0]), operand_dtype);
    const int64_t negated =
        wrap_integer(static_cast<int64_t>(0 - static_cast<uint64_t>(a)), operand_dtype);
    if (op.kind == OpKind::Neg) return negated;
    if (a >= 0) return a;
    if (negated < 0) return std::nullopt;  // |INT_MIN| does not exist
    return negated;
  }
  if (operands.size() != 2) return std::nullopt;
  if (floats) {
    auto r = fold_float_binary(op.kind, as_float(operands[0]), as_float(operands[1]));
    if (!r) return std::nullopt;
    return *r;
  }
  auto r = fold_int_binary(op.kind, wrap_integer(as_int(operands[0]), operand_dtype),
                           wrap_integer(as_int(operands[1]), operand_dtype), operand_dtype);
  if (!r) return std::nullopt;
  return wrap_integer(*r, result_dtype);
}

}  // namespace metile::transform
