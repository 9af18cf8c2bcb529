// IEEE binary16 (half) and bfloat16 conversions from and to float, rounding to nearest
// even: the one implementation behind the runtime's scalar arguments and the host
// emulator's half and bfloat types. Self-contained (standard headers only) because the
// emulator's metal_stdlib embeds it into every host kernel.
#pragma once

#include <bit>
#include <cstdint>

namespace metile {

// 1 sign, 5 exponent, 10 mantissa bits. NaN stays a quiet NaN keeping the top payload bits;
// values from 65520 up round to infinity.
inline uint16_t float_to_half_bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t ax = x & 0x7fffffffu;
  if (ax >= 0x7f800000u)
    return uint16_t(sign | (ax > 0x7f800000u ? 0x7e00u | ((ax >> 13) & 0x3ffu) : 0x7c00u));
  if (ax >= 0x477ff000u) return uint16_t(sign | 0x7c00u);
  if (ax >= 0x38800000u) {                // normal half
    const uint32_t r = ax - 0x38000000u;  // rebias the exponent from 127 to 15
    uint32_t h = r >> 13;
    const uint32_t rest = r & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return uint16_t(sign | h);
  }
  if (ax <= 0x33000000u) return uint16_t(sign);  // <= 2^-25 ties to zero
  // Subnormal half: count units of 2^-24.
  const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126u - (ax >> 23);
  uint32_t h = mant >> shift;
  const uint32_t rest = mant & ((1u << shift) - 1u), half_unit = 1u << (shift - 1u);
  if (rest > half_unit || (rest == half_unit && (h & 1u))) ++h;
  return uint16_t(sign | h);
}

inline float half_bits_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0) {
    const float v = float(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return sign ? -v : v;
  }
  if (e == 31) return std::bit_cast<float>(sign | 0x7f800000u | (m << 13));
  return std::bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
}

// The top 16 bits of a float; NaN stays a quiet NaN.
inline uint16_t float_to_bfloat_bits(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x0040u);
  return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

inline float bfloat_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(uint32_t(b) << 16);
}

}  // namespace metile
