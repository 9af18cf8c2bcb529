// The fp8 conversions (ir/float8.h) as prelude helpers in the dialect's language: an fp8
// value is its byte, and every conversion goes through f32 with the same bit steps as
// ir::float8_encode and ir::float8_decode, so the host, MSL and CUDA give identical bytes
// (round to nearest even, saturating to the largest finite value, NaN to 0x7F: PTX's
// cvt.rn.satfinite, which Triton emits on sm_90).
#include <cmath>
#include <cstdio>

#include "metile/codegen/dialect.h"
#include "metile/codegen/literals.h"
#include "metile/ir/float8.h"
#include "metile/support/errors.h"

namespace metile::codegen {

namespace {

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%Xu", v);
  return text;
}

std::string encoder(const DialectTable& d, ir::DType t, const std::string& fn,
                    std::string_view byte) {
  const ir::Float8Format f = ir::float8_format(t);
  const std::string u(d.scalar_types[static_cast<int>(ir::DType::u32)]);
  const std::string B(byte);
  const int shift = 23 - f.mantissa_bits;
  const std::string rebias = std::to_string((127 - f.bias) << f.mantissa_bits) + "u";
  return std::string(d.body_qualifier) + " " + B + " " + fn + "(float x) {\n" + "  const " + u +
         " bits = " + std::string(d.float_as_bits) + "(x);\n" + "  const " + u +
         " sign = (bits >> 24) & 0x80u;\n" + "  const " + u + " a = bits & 0x7FFFFFFFu;\n" +
         "  if (a > 0x7F800000u) return 0x7F;\n" + "  if (a >= " + hex(f.max_f32_bits) +
         ") return static_cast<" + B + ">(sign | " + hex(f.max_byte) + ");\n" +
         "  const int exponent = static_cast<int>(a >> 23) - 127;\n" +
         "  if (exponent >= " + std::to_string(1 - f.bias) + ")\n" + "    return static_cast<" + B +
         ">(sign | (((a + " + hex((1u << (shift - 1)) - 1) + " + ((a >> " + std::to_string(shift) +
         ") & 1u)) >> " + std::to_string(shift) + ") - " + rebias + "));\n" +
         "  const int drop = " + std::to_string(24 - f.bias - f.mantissa_bits) + " - exponent;\n" +
         "  if (drop > 24) return static_cast<" + B + ">(sign);\n" + "  const " + u +
         " significand = (a & 0x7FFFFFu) | 0x800000u;\n" + "  const " + u +
         " q = significand >> drop;\n" + "  const " + u +
         " rest = significand & ((1u << drop) - 1u);\n" + "  const " + u +
         " half = 1u << (drop - 1);\n" + "  return static_cast<" + B +
         ">(sign | (q + ((rest > half || (rest == half && (q & 1u) != 0u)) ? 1u : 0u)));\n" + "}\n";
}

std::string decoder(const DialectTable& d, ir::DType t, const std::string& fn,
                    std::string_view byte) {
  const ir::Float8Format f = ir::float8_format(t);
  const std::string u(d.scalar_types[static_cast<int>(ir::DType::u32)]);
  const std::string as_float(d.bits_as_float);
  const int top = (1 << (7 - f.mantissa_bits)) - 1;
  const int all_ones = (1 << f.mantissa_bits) - 1;
  const std::string special = f.has_infinity
                                  ? "  if (e == " + std::to_string(top) + "u) return " + as_float +
                                        "(sign | (m == 0u ? 0x7F800000u : 0x7FC00000u));\n"
                                  : "  if (e == " + std::to_string(top) +
                                        "u && m == " + std::to_string(all_ones) + "u) return " +
                                        as_float + "(sign | 0x7FC00000u);\n";
  const float step = std::ldexp(1.0f, 1 - f.bias - f.mantissa_bits);
  return std::string(d.body_qualifier) + " float " + fn + "(" + std::string(byte) + " b) {\n" +
         "  const " + u + " sign = static_cast<" + u + ">(b & 0x80u) << 24;\n" + "  const " + u +
         " e = (static_cast<" + u + ">(b) >> " + std::to_string(f.mantissa_bits) + ") & " +
         std::to_string(top) + "u;\n" + "  const " + u + " m = static_cast<" + u + ">(b) & " +
         std::to_string(all_ones) + "u;\n" + special +
         "  if (e == 0u) {\n"
         "    const float v = static_cast<float>(m) * " +
         float_literal(step) +
         ";\n"
         "    return sign != 0u ? -v : v;\n"
         "  }\n"
         "  return " +
         as_float + "(sign | ((e + " + std::to_string(127 - f.bias) + "u) << 23) | (m << " +
         std::to_string(23 - f.mantissa_bits) + "));\n" + "}\n";
}

}  // namespace

std::string CDialect::float8_cast(const ir::Type& from, const ir::Type& to, const std::string& expr,
                                  Prelude& prelude) const {
  if (!from.is_scalar())
    throw NotSupported("emit " + std::string(table_.language) + ": converting " + from.str() +
                       " to " + to.str() + " (fp8 conversions take scalars)");
  if (from.dtype == ir::DType::f64 || to.dtype == ir::DType::f64)
    throw NotSupported("emit " + std::string(table_.language) + ": converting " + from.str() +
                       " to " + to.str() +
                       " (fp8 converts to and from f32, f16 and bf16, as in Triton; go "
                       "through f32)");
  const ir::Type f32 = ir::Type::scalar(ir::DType::f32);
  std::string value = expr;
  if (ir::is_fp8(from.dtype)) {
    const std::string fn =
        std::string(table_.helper_prefix) + "from_" + std::string(ir::dtype_name(from.dtype));
    prelude.add(fn, from.dtype, decoder(table_, from.dtype, fn, scalar_type(from.dtype)));
    value = fn + "(" + value + ")";
    if (!ir::is_fp8(to.dtype))
      return to.dtype == ir::DType::f32 ? value : cast(f32, to, value, prelude);
  } else if (from.dtype != ir::DType::f32) {
    value = cast(from, f32, value, prelude);
  }
  const std::string fn =
      std::string(table_.helper_prefix) + "to_" + std::string(ir::dtype_name(to.dtype));
  prelude.add(fn, to.dtype, encoder(table_, to.dtype, fn, scalar_type(to.dtype)));
  return fn + "(" + value + ")";
}

}  // namespace metile::codegen
