#include "metile/ir/scalar_eval.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include "metile/ir/float8.h"

namespace metile::ir {

int64_t wrap_integer(DType t, int64_t x) {
  switch (t) {
    case DType::i8:
      return static_cast<int8_t>(static_cast<uint8_t>(x));
    case DType::u8:
      return static_cast<uint8_t>(x);
    case DType::i16:
      return static_cast<int16_t>(static_cast<uint16_t>(x));
    case DType::u16:
      return static_cast<uint16_t>(x);
    case DType::i32:
      return static_cast<int32_t>(static_cast<uint32_t>(x));
    case DType::u32:
      return static_cast<uint32_t>(x);
    case DType::i1:
      return x & 1;
    case DType::i64:
      return x;
    case DType::f16:
    case DType::bf16:
    case DType::f32:
    case DType::f64:
    case DType::f8e4m3:
    case DType::f8e5m2:
      break;
  }
  throw InternalError("wrap_integer of the float dtype " + std::string(dtype_name(t)));
}

namespace {

// Rounding to a float format of `bits` significant bits whose normal exponents start at
// `min_exp`; below it the quantum stays that of the smallest normal (subnormals).
double round_to_bits(double x, int bits, int min_exp, double max_finite) {
  if (x == 0 || std::isnan(x) || std::isinf(x)) return x;
  int e = 0;
  std::frexp(x, &e);  // |x| = m * 2^e, m in [0.5, 1)
  const double quantum = std::ldexp(1.0, std::max(e, min_exp + 1) - bits);
  const double r = std::nearbyint(x / quantum) * quantum;  // ties to even
  return std::abs(r) > max_finite ? std::copysign(INFINITY, x) : r;
}

}  // namespace

double round_float(DType t, double x) {
  switch (t) {
    case DType::f32:
      return static_cast<float>(x);
    case DType::f16:
      return round_to_bits(x, 11, -14, 65504.0);
    case DType::bf16:
      return round_to_bits(x, 8, -126, 3.3895313892515355e38);
    case DType::f64:
      return x;
    // Through f32, as the emitted conversions go (an f64 source rounds twice; the frontends
    // reject converting f64 to fp8).
    case DType::f8e4m3:
    case DType::f8e5m2:
      return float8_decode(t, float8_encode(t, static_cast<float>(x)));
    case DType::i8:
    case DType::u8:
    case DType::i16:
    case DType::u16:
    case DType::i32:
    case DType::u32:
    case DType::i64:
    case DType::i1:
      break;
  }
  throw InternalError("round_float to the integer dtype " + std::string(dtype_name(t)));
}

Scalar Scalar::of(DType t, int64_t x) {
  if (!is_float(t)) return {t, wrap_integer(t, x), 0};
  // Straight to float, as the target converts: through double, a 64-bit integer rounds twice.
  if (t == DType::f32) return {t, 0, static_cast<float>(x)};
  return {t, 0, round_float(t, static_cast<double>(x))};
}

Scalar Scalar::of(DType t, double x) {
  if (is_float(t)) return {t, 0, round_float(t, x)};
  return {t, wrap_integer(t, static_cast<int64_t>(x)), 0};
}

Scalar Scalar::of_attr(DType t, const Attr& value) {
  if (auto* i = std::get_if<int64_t>(&value)) return of(t, *i);
  if (auto* d = std::get_if<double>(&value)) return of(t, *d);
  throw InternalError("a constant's value is not a number");
}

Attr Scalar::to_attr() const {
  if (is_float(dtype)) return f;
  return i;
}

double Scalar::number() const {
  return is_float(dtype) ? f : static_cast<double>(i);
}

namespace {

using Operands = std::span<const Scalar>;

Evaluation exact(Scalar v) {
  return {Outcome::exact, v, ""};
}
Evaluation approximate(Scalar v, const char* why) {
  return {Outcome::approximate, v, why};
}
Evaluation undefined(const char* why) {
  return {Outcome::undefined, {}, why};
}
Evaluation unsupported(const char* why) {
  return {Outcome::unsupported, {}, why};
}

void expect_operands(Operands x, size_t n) {
  METILE_ASSERT(x.size() == n, "scalar evaluation with " + std::to_string(x.size()) +
                                   " operands, expected " + std::to_string(n));
}

// The two operands of a binary op, which share one dtype.
std::pair<Scalar, Scalar> pair_of(Operands x) {
  expect_operands(x, 2);
  METILE_ASSERT(x[0].dtype == x[1].dtype, "binary op on operands of two dtypes");
  return {x[0], x[1]};
}

bool is_half(DType t) {
  return t == DType::f16 || t == DType::bf16;
}
int bit_width(DType t) {
  return t == DType::i1 ? 1 : dtype_bytes(t) * 8;
}

// add, sub, mul: floats rounded once (computing in double and rounding to f32, f16 or bf16
// gives the correctly rounded result: double has more than twice their precision plus two
// bits), integers wrapped around.
template <typename F>
Evaluation wrapping(Operands x, DType r, F f) {
  auto [a, b] = pair_of(x);
  if (is_float(a.dtype)) return exact(Scalar::of(r, f(a.f, b.f)));
  return exact(Scalar::of(
      r, static_cast<int64_t>(f(static_cast<uint64_t>(a.i), static_cast<uint64_t>(b.i)))));
}

// Integer division by zero and the signed minimum divided by -1 are undefined. 8-bit
// operands divide in int, as C promotes them, so -128 / -1 is 128, wrapped to -128.
const char* division_fault(const Scalar& a, const Scalar& b) {
  if (b.i == 0) return "integer division by zero";
  const bool is_signed = a.dtype == DType::i32 || a.dtype == DType::i64;
  if (is_signed && a.i == integer_range(a.dtype).min && b.i == -1)
    return "integer division of the minimum by -1";
  return nullptr;
}

Evaluation divide(Operands x, DType r) {
  auto [a, b] = pair_of(x);
  if (is_float(a.dtype)) return exact(Scalar::of(r, a.f / b.f));
  if (const char* fault = division_fault(a, b)) return undefined(fault);
  return exact(Scalar::of(r, a.i / b.i));  // truncates toward zero
}

Evaluation remainder(Operands x, DType r) {
  auto [a, b] = pair_of(x);
  if (is_float(a.dtype)) return exact(Scalar::of(r, std::fmod(a.f, b.f)));
  if (const char* fault = division_fault(a, b)) return undefined(fault);
  return exact(Scalar::of(r, a.i % b.i));  // the sign of a
}

Evaluation floor_divide(Operands x, DType r) {
  auto [a, b] = pair_of(x);
  if (is_float(a.dtype))
    return approximate(Scalar::of(r, std::floor(round_float(r, a.f / b.f))),
                       "floor turns a last-bit difference of the quotient into a whole unit");
  if (const char* fault = division_fault(a, b)) return undefined(fault);
  return exact(Scalar::of(r, a.i / b.i - ((a.i % b.i != 0) && ((a.i < 0) != (b.i < 0)))));
}

Evaluation min_max(Operands x, DType r, bool is_max) {
  auto [a, b] = pair_of(x);
  if (!is_float(a.dtype))
    return exact(Scalar::of(r, is_max ? std::max(a.i, b.i) : std::min(a.i, b.i)));
  const double v = is_max ? std::fmax(a.f, b.f) : std::fmin(a.f, b.f);
  // Equal operands include +0 and -0, which implementations order differently.
  if (std::isnan(a.f) || std::isnan(b.f) || a.f == b.f)
    return approximate(Scalar::of(r, v),
                       "min and max differ between targets on NaN and signed zeros");
  return exact(Scalar::of(r, v));
}

template <typename F>
Evaluation bitwise(Operands x, DType r, F f) {
  auto [a, b] = pair_of(x);
  if (is_float(a.dtype)) return unsupported("bitwise ops take integers");
  return exact(Scalar::of(r, f(a.i, b.i)));
}

Evaluation shift(Operands x, DType r, bool left) {
  auto [a, b] = pair_of(x);
  if (is_float(a.dtype)) return unsupported("shifts take integers");
  if (b.i < 0 || b.i >= bit_width(a.dtype))
    return undefined("shift amount outside 0 .. bit width - 1");
  if (left) return exact(Scalar::of(r, static_cast<int64_t>(static_cast<uint64_t>(a.i) << b.i)));
  return exact(Scalar::of(r, a.i >> b.i));  // unsigned values are non-negative: a logical shift
}

Evaluation compare(const Attrs& attrs, Operands x, DType r) {
  auto [a, b] = pair_of(x);
  auto pred = attrs.find("pred");
  METILE_ASSERT(pred != attrs.end() && std::holds_alternative<std::string>(pred->second),
                "cmp without a pred");
  const std::string& p = std::get<std::string>(pred->second);
  auto holds = [&](auto u, auto v) {
    if (p == "lt") return u < v;
    if (p == "le") return u <= v;
    if (p == "gt") return u > v;
    if (p == "ge") return u >= v;
    if (p == "eq") return u == v;
    if (p == "ne") return u != v;
    throw InternalError("cmp with the unknown pred '" + p + "'");
  };
  const bool v = is_float(a.dtype) ? holds(a.f, b.f) : holds(a.i, b.i);
  return exact(Scalar::of(r, int64_t{v}));
}

Evaluation cast(Operands x, DType to) {
  expect_operands(x, 1);
  const Scalar a = x[0];
  if (!is_float(a.dtype)) {
    if (to == DType::i1) return exact(Scalar::of(to, int64_t{a.i != 0}));
    return exact(Scalar::of(to, a.i));
  }
  if (is_float(to)) return exact(Scalar::of(to, a.f));
  if (to == DType::i1) return exact(Scalar::of(to, int64_t{a.f != 0}));
  if (to == DType::i8 || to == DType::u8 || to == DType::i16 || to == DType::u16) {
    // Saturating, NaN to 0 (docs/python.md, "8-bit integers"), as the emitters convert.
    if (std::isnan(a.f)) return exact(Scalar::of(to, int64_t{0}));
    const IntegerRange range = integer_range(to);
    const double clamped =
        std::clamp(std::trunc(a.f), static_cast<double>(range.min), static_cast<double>(range.max));
    return exact(Scalar::of(to, static_cast<int64_t>(clamped)));
  }
  const double t = std::trunc(a.f);
  const double lo = to == DType::u32 ? 0.0 : to == DType::i32 ? -2147483648.0 : -9.2e18;
  const double hi = to == DType::u32 ? 4294967295.0 : to == DType::i32 ? 2147483647.0 : 9.2e18;
  if (std::isnan(a.f) || t < lo || t > hi)
    return undefined("float to integer conversion out of range");
  return exact(Scalar::of(to, static_cast<int64_t>(t)));
}

Evaluation negate(Operands x, DType r) {
  expect_operands(x, 1);
  if (is_float(x[0].dtype)) return exact(Scalar::of(r, -x[0].f));
  return exact(Scalar::of(r, static_cast<int64_t>(0 - static_cast<uint64_t>(x[0].i))));
}

Evaluation absolute(Operands x, DType r) {
  expect_operands(x, 1);
  const Scalar a = x[0];
  if (is_float(a.dtype)) return exact(Scalar::of(r, std::fabs(a.f)));
  if (a.i >= 0) return exact(Scalar::of(r, a.i));
  const Scalar negated = Scalar::of(r, static_cast<int64_t>(0 - static_cast<uint64_t>(a.i)));
  // 8-bit values take their absolute value in int, as C promotes them: -128 wraps to -128.
  if (negated.i < 0 && dtype_bytes(r) >= 4)
    return undefined("the absolute value of the minimum is not representable");
  return exact(negated);
}

// Computed in double and rounded once; the targets' functions are approximations of their own.
Evaluation math(Operands x, DType r, double (*f)(double)) {
  expect_operands(x, 1);
  if (!is_float(x[0].dtype)) return unsupported("math functions take floats");
  return approximate(Scalar::of(r, f(x[0].f)), "targets approximate math functions");
}

// floor and ceil round to an integer of the operand's dtype, exactly on every target.
Evaluation round_to_integer(Operands x, DType r, double (*f)(double)) {
  expect_operands(x, 1);
  if (!is_float(x[0].dtype)) return unsupported("floor and ceil take floats");
  return exact(Scalar::of(r, f(x[0].f)));
}

Evaluation evaluate_on_every_target(OpKind kind, const Attrs& attrs, Operands x, DType r) {
  const std::optional<ScalarOp> op = scalar_op(kind);
  if (!op) return unsupported("not a computation on scalars");
  using S = ScalarOp;
  switch (*op) {
    case S::Constant: {
      expect_operands(x, 0);
      auto value = attrs.find("value");
      METILE_ASSERT(value != attrs.end(), "constant without a value");
      return exact(Scalar::of_attr(r, value->second));
    }
    case S::Add:
      return wrapping(x, r, std::plus<>{});
    case S::Sub:
      return wrapping(x, r, std::minus<>{});
    case S::Mul:
      return wrapping(x, r, std::multiplies<>{});
    case S::Div:
      return divide(x, r);
    case S::Rem:
      return remainder(x, r);
    case S::FloorDiv:
      return floor_divide(x, r);
    case S::Min:
      return min_max(x, r, false);
    case S::Max:
      return min_max(x, r, true);
    case S::And:
      return bitwise(x, r, std::bit_and<>{});
    case S::Or:
      return bitwise(x, r, std::bit_or<>{});
    case S::Xor:
      return bitwise(x, r, std::bit_xor<>{});
    case S::Shl:
      return shift(x, r, true);
    case S::Shr:
      return shift(x, r, false);
    case S::Cmp:
      return compare(attrs, x, r);
    case S::Select:
      expect_operands(x, 3);
      return exact(x[0].i != 0 ? x[1] : x[2]);
    case S::Cast:
      return cast(x, r);
    case S::Neg:
      return negate(x, r);
    case S::Abs:
      return absolute(x, r);
    case S::Exp:
      return math(x, r, [](double v) { return std::exp(v); });
    case S::Exp2:
      return math(x, r, [](double v) { return std::exp2(v); });
    case S::Log:
      return math(x, r, [](double v) { return std::log(v); });
    case S::Sqrt:
      return math(x, r, [](double v) { return std::sqrt(v); });
    case S::Rsqrt:
      return math(x, r, [](double v) { return 1.0 / std::sqrt(v); });
    case S::Tanh:
      return math(x, r, [](double v) { return std::tanh(v); });
    case S::Sin:
      return math(x, r, [](double v) { return std::sin(v); });
    case S::Cos:
      return math(x, r, [](double v) { return std::cos(v); });
    case S::Floor:
      return round_to_integer(x, r, [](double v) { return std::floor(v); });
    case S::Ceil:
      return round_to_integer(x, r, [](double v) { return std::ceil(v); });
  }
  throw InternalError("scalar evaluation of an op kind outside ops.def");
}

}  // namespace

std::optional<ScalarOp> scalar_op(OpKind kind) {
  if (!op_info(kind).scalar) return std::nullopt;
  return static_cast<ScalarOp>(kind);
}

Evaluation evaluate(OpKind kind, const Attrs& attrs, std::span<const Scalar> operands,
                    DType result) {
  Evaluation e = evaluate_on_every_target(kind, attrs, operands, result);
  if (e.outcome != Outcome::exact) return e;
  const bool touches_half =
      is_half(result) || std::any_of(operands.begin(), operands.end(),
                                     [](const Scalar& s) { return is_half(s.dtype); });
  // A target may keep f16 and bf16 values in f32 registers between ops, unrounded.
  if (touches_half) e = approximate(e.value, "targets may keep f16 and bf16 at higher precision");
  return e;
}

}  // namespace metile::ir
