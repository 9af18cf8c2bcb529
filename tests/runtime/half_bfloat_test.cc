// half / bfloat conversions of the host metal_stdlib against independent references:
// the compiler's _Float16 for binary16, neighbour comparison for bfloat16.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "metile/runtime/host/msl/scalar_types.h"

namespace {

using metal::bfloat;
using metal::half;

uint32_t bits_of(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
float float_of(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint16_t reference_half(float f) {
  _Float16 h = static_cast<_Float16>(f);
  uint16_t b;
  std::memcpy(&b, &h, 2);
  return b;
}
float reference_half_value(uint16_t b) {
  _Float16 h;
  std::memcpy(&h, &b, 2);
  return static_cast<float>(h);
}
uint16_t reference_bfloat(float f) {
  const uint32_t lo = bits_of(f) & 0xffff0000u, hi = lo + 0x10000u;
  // Past the largest finite value, the upper neighbour is 2^128 (which rounds to infinity).
  const double upper =
      std::isinf(float_of(hi)) ? std::copysign(std::ldexp(1.0, 128), f) : double(float_of(hi));
  const double dlo = std::fabs(double(f) - float_of(lo)), dhi = std::fabs(upper - f);
  return uint16_t((dlo < dhi || (dlo == dhi && ((lo >> 16) & 1) == 0) ? lo : hi) >> 16);
}

void expect_half(float f) {
  const uint16_t got = half(f).bits, want = reference_half(f);
  if (std::isnan(f)) {
    EXPECT_EQ(got & 0x7c00, 0x7c00) << f;
    EXPECT_NE(got & 0x3ff, 0) << f;
  } else {
    ASSERT_EQ(got, want) << std::hexfloat << f;
  }
}

TEST(HalfConversion, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const half h = half::from_bits(uint16_t(b));
    const float f = float(h);
    if (std::isnan(reference_half_value(uint16_t(b)))) {
      EXPECT_TRUE(std::isnan(f)) << b;
      continue;
    }
    ASSERT_EQ(bits_of(f), bits_of(reference_half_value(uint16_t(b)))) << b;
    ASSERT_EQ(half(f).bits, b) << b;
  }
}

TEST(HalfConversion, TiesAndNeighboursOfTiesRoundToNearestEven) {
  // For every pair of adjacent positive halves: the midpoint (a tie) and one float ulp on
  // either side of it; covers subnormals, the normal range and the overflow threshold.
  for (uint32_t b = 0; b < 0x7c00; ++b) {
    const float lo = reference_half_value(uint16_t(b));
    const float hi = b + 1 == 0x7c00 ? 65536.0f : reference_half_value(uint16_t(b + 1));
    const float mid = float((double(lo) + double(hi)) / 2);
    for (float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, INFINITY)}) {
      expect_half(f);
      expect_half(-f);
    }
  }
}

TEST(HalfConversion, SpecialValuesAndRandomFloats) {
  for (float f :
       {0.0f, -0.0f, INFINITY, -INFINITY, NAN, 65504.0f, 65519.99f, 65520.0f, 1e-8f, 2.9802322e-08f,
        5.9604645e-08f, 6.1035156e-05f, 1e30f, -1e30f, std::numeric_limits<float>::denorm_min()})
    expect_half(f);
  EXPECT_EQ(half(65520.0f).bits, 0x7c00);  // the first value that rounds to infinity
  EXPECT_EQ(half(-0.0f).bits, 0x8000);
  EXPECT_EQ(half(2.9802322e-08f).bits, 0x0000);  // exactly half the smallest subnormal: even
  std::mt19937 rng(1);
  for (int i = 0; i < 1000000; ++i) expect_half(float_of(rng()));
}

TEST(HalfArithmetic, IsFloatArithmeticRoundedBack) {
  const half a(1.0f), b = half::from_bits(0x0001);  // 1 + smallest subnormal rounds to 1
  EXPECT_EQ((a + b).bits, half(1.0f).bits);
  EXPECT_EQ((half(3.0f) * half(0.5f)).bits, half(1.5f).bits);
  static_assert(std::is_same_v<decltype(half(1.0f) * 2), half>);
  static_assert(std::is_same_v<decltype(half(1.0f) * 2.0f), float>);
  static_assert(std::is_same_v<decltype(half(1.0f) + bfloat(1.0f)), float>);
  EXPECT_TRUE(half(2.0f) > 1);
  EXPECT_EQ((-half(2.0f)).bits, 0xc000);
}

TEST(BfloatConversion, RoundsToNearestEvenAndKeepsSpecials) {
  for (uint32_t b = 0; b < 0x10000; ++b) {  // every bfloat is exact in float
    const float f = float(bfloat::from_bits(uint16_t(b)));
    ASSERT_EQ(bits_of(f), b << 16);
    if (!std::isnan(f)) {
      ASSERT_EQ(bfloat(f).bits, b);
    }
  }
  std::mt19937 rng(2);
  for (int i = 0; i < 1000000; ++i) {
    const float f = float_of(rng());
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(float(bfloat(f))));
      continue;
    }
    ASSERT_EQ(bfloat(f).bits, reference_bfloat(f)) << std::hexfloat << f;
  }
  EXPECT_EQ(bfloat(float_of(0x3f808000u)).bits, 0x3f80);          // tie to even (down)
  EXPECT_EQ(bfloat(float_of(0x3f818000u)).bits, 0x3f82);          // tie to even (up)
  EXPECT_EQ(bfloat(float_of(0x7f7fffffu)).bits, 0x7f80);          // FLT_MAX rounds to infinity
  EXPECT_TRUE(std::isnan(float(bfloat(float_of(0x7f800001u)))));  // a NaN never becomes inf
}

}  // namespace
