#include "metile/ir/float8.h"

#include <bit>
#include <cmath>
#include <limits>

#include "metile/support/errors.h"

namespace metile::ir {

Float8Format float8_format(DType t) {
  if (t == DType::f8e4m3) return {3, 7, 0x43E00000u, 0x7E, false};
  if (t == DType::f8e5m2) return {2, 15, 0x47600000u, 0x7B, true};
  throw InternalError("float8_format of " + std::string(dtype_name(t)));
}

// The emitters' helpers (codegen/float8_dialect.cc) compute the same steps in the target's
// language; tests compare both with ml_dtypes.
uint8_t float8_encode(DType t, float x) {
  const Float8Format f = float8_format(t);
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t sign = (bits >> 24) & 0x80u;
  const uint32_t a = bits & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7F;
  if (a >= f.max_f32_bits) return static_cast<uint8_t>(sign | f.max_byte);
  const int shift = 23 - f.mantissa_bits;
  const int exponent = static_cast<int>(a >> 23) - 127;
  if (exponent >= 1 - f.bias) {
    // A normal result: round the f32 significand at `shift` bits, ties to even (a carry
    // into the exponent is the right result), then rebias the exponent.
    const uint32_t rounded = (a + ((1u << (shift - 1)) - 1) + ((a >> shift) & 1u)) >> shift;
    return static_cast<uint8_t>(
        sign | (rounded - (static_cast<uint32_t>(127 - f.bias) << f.mantissa_bits)));
  }
  // A subnormal (or zero) result: the count of the smallest subnormal step, 2^(1 - bias -
  // mantissa_bits), rounded to nearest even; 1 << mantissa_bits is the smallest normal.
  const int drop = 24 - f.bias - f.mantissa_bits - exponent;
  if (drop > 24) return static_cast<uint8_t>(sign);
  const uint32_t significand = (a & 0x7FFFFFu) | 0x800000u;
  const uint32_t q = significand >> drop;
  const uint32_t rest = significand & ((1u << drop) - 1u);
  const uint32_t half = 1u << (drop - 1);
  const uint32_t r = q + ((rest > half || (rest == half && (q & 1u))) ? 1u : 0u);
  return static_cast<uint8_t>(sign | r);
}

float float8_decode(DType t, uint8_t byte) {
  const Float8Format f = float8_format(t);
  const bool negative = byte & 0x80u;
  const int exponent = (byte & 0x7F) >> f.mantissa_bits;
  const int mantissa = byte & ((1 << f.mantissa_bits) - 1);
  const int top = (1 << (7 - f.mantissa_bits)) - 1;
  float v;
  if (exponent == top && (f.has_infinity || mantissa == (1 << f.mantissa_bits) - 1))
    v = f.has_infinity && mantissa == 0 ? std::numeric_limits<float>::infinity()
                                        : std::numeric_limits<float>::quiet_NaN();
  else if (exponent == 0)
    v = std::ldexp(static_cast<float>(mantissa), 1 - f.bias - f.mantissa_bits);
  else
    v = std::ldexp(static_cast<float>((1 << f.mantissa_bits) | mantissa),
                   exponent - f.bias - f.mantissa_bits);
  return negative ? -v : v;
}

}  // namespace metile::ir
