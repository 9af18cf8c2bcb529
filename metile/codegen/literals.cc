#include "metile/codegen/literals.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>

#include "metile/ir/float8.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

// Significand bits (with the implicit one), the smallest exponent of a subnormal's last
// bit, and the largest finite value of each narrow float format.
struct FloatFormat {
  int significand_bits;
  int min_quantum_exponent;
  double max_finite;
};

FloatFormat format_of(ir::DType t) {
  switch (t) {
    case ir::DType::f16:
      return {11, -24, 65504.0};
    case ir::DType::bf16:
      return {8, -133, 3.3895313892515355e38};
    case ir::DType::f32:
      return {24, -149, std::numeric_limits<float>::max()};
    case ir::DType::f64:
      return {53, -1074, std::numeric_limits<double>::max()};
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2:
    case ir::DType::i8:
    case ir::DType::u8:
    case ir::DType::i16:
    case ir::DType::u16:
    case ir::DType::i32:
    case ir::DType::u32:
    case ir::DType::i64:
    case ir::DType::i1:
      break;
  }
  throw InternalError("round_to_dtype: " + std::string(ir::dtype_name(t)) + " is not a float");
}

int64_t integer_value(const ir::Attr& value, ir::DType t) {
  if (const int64_t* i = std::get_if<int64_t>(&value)) return *i;
  const double* d = std::get_if<double>(&value);
  if (!d || std::trunc(*d) != *d || !std::isfinite(*d))
    throw UserError("constant: an " + std::string(ir::dtype_name(t)) +
                    " constant needs an integer value");
  return static_cast<int64_t>(*d);
}

}  // namespace

double round_to_dtype(double value, ir::DType t) {
  if (!std::isfinite(value) || value == 0.0) return value;
  const FloatFormat f = format_of(t);
  int exponent = 0;
  std::frexp(value, &exponent);  // value = m * 2^exponent, 0.5 <= |m| < 1
  const int quantum = std::max(exponent - f.significand_bits, f.min_quantum_exponent);
  // nearbyint rounds half to even in the default rounding mode.
  const double rounded = std::ldexp(std::nearbyint(std::ldexp(value, -quantum)), quantum);
  if (std::fabs(rounded) > f.max_finite) return std::copysign(INFINITY, value);
  return rounded;
}

std::string float_literal(float value) {
  METILE_ASSERT(std::isfinite(value), "NaN and infinities are the dialect's special_float");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(value));
  std::string text = buf;
  // %.9g reads back as the same float; without a point or exponent it would be an integer.
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + "f";
}

std::string double_literal(double value) {
  METILE_ASSERT(std::isfinite(value), "NaN and infinities are the dialect's special_float");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  std::string text = buf;
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

std::string constant_literal(const ir::Attr& value, ir::DType t, const CDialect& dialect) {
  if (ir::is_float(t)) {
    double v = 0;
    if (const int64_t* i = std::get_if<int64_t>(&value))
      v = static_cast<double>(*i);
    else if (const double* d = std::get_if<double>(&value))
      v = *d;
    else
      throw UserError("constant: the value of an " + std::string(ir::dtype_name(t)) +
                      " constant must be a number");
    // An fp8 constant is its byte (the format's conversion, saturating as casts do).
    if (ir::is_fp8(t))
      return dialect.convert(std::string(dialect.scalar_type(t)),
                             std::to_string(ir::float8_encode(t, static_cast<float>(v))));
    if (t == ir::DType::f64) {
      if (std::isnan(v)) return dialect.special_float(SpecialFloat::NaN, t);
      if (std::isinf(v))
        return dialect.special_float(
            v > 0 ? SpecialFloat::Infinity : SpecialFloat::NegativeInfinity, t);
      return double_literal(v);
    }
    const float rounded = static_cast<float>(round_to_dtype(v, t));
    if (std::isnan(rounded)) return dialect.special_float(SpecialFloat::NaN, t);
    if (std::isinf(rounded))
      return dialect.special_float(
          rounded > 0 ? SpecialFloat::Infinity : SpecialFloat::NegativeInfinity, t);
    const std::string literal = float_literal(rounded);
    if (t == ir::DType::f32) return literal;
    return dialect.convert(std::string(dialect.scalar_type(t)), literal);
  }
  const int64_t i = integer_value(value, t);
  if (!ir::integer_range(t).contains(i))
    throw UserError("constant: " + std::to_string(i) + " does not fit in " +
                    std::string(ir::dtype_name(t)));
  switch (t) {
    case ir::DType::i1:
      return i ? "true" : "false";
    case ir::DType::u32:
      return std::to_string(static_cast<uint32_t>(i)) + "u";
    // The int literal; declarations give it the 8- or 16-bit type.
    case ir::DType::i8:
    case ir::DType::u8:
    case ir::DType::i16:
    case ir::DType::u16:
      return std::to_string(i);
    case ir::DType::i32:
      // The most negative value has no positive literal to negate.
      if (i == std::numeric_limits<int32_t>::min()) return "(-2147483647 - 1)";
      return std::to_string(static_cast<int32_t>(i));
    case ir::DType::i64:
      if (i == std::numeric_limits<int64_t>::min()) return "(-9223372036854775807l - 1l)";
      return std::to_string(i) + "l";
    case ir::DType::f16:
    case ir::DType::bf16:
    case ir::DType::f32:
    case ir::DType::f64:
    case ir::DType::f8e4m3:
    case ir::DType::f8e5m2:
      break;
  }
  throw InternalError("constant_literal: " + std::string(ir::dtype_name(t)) + " is a float");
}

std::string string_literal(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte >= 0x7f) {
      char octal[8];  // three octal digits: a following digit cannot extend the escape
      std::snprintf(octal, sizeof octal, "\\%03o", byte);
      out += octal;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

}  // namespace metile::codegen
