// The fp8 byte conversions (ir/float8.h) on values worked out by hand from the formats'
// definitions; tests/python/test_fp8.py compares the emitted conversions with ml_dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "metile/ir/float8.h"

namespace metile::ir {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Float8, E4m3EncodesByTheOcpTable) {
  const DType t = DType::f8e4m3;
  EXPECT_EQ(float8_encode(t, 1.0f), 0x38);          // exponent 7 (bias 7), mantissa 0
  EXPECT_EQ(float8_encode(t, -1.5f), 0xBC);         // sign, exponent 7, mantissa 100
  EXPECT_EQ(float8_encode(t, 448.0f), 0x7E);        // the largest finite value
  EXPECT_EQ(float8_encode(t, 0.015625f), 0x08);     // 2^-6, the smallest normal
  EXPECT_EQ(float8_encode(t, 0.001953125f), 0x01);  // 2^-9, the smallest subnormal
  EXPECT_EQ(float8_encode(t, -0.0f), 0x80);
}

TEST(Float8, E4m3SaturatesAndHasOneNaN) {
  const DType t = DType::f8e4m3;
  EXPECT_EQ(float8_encode(t, 464.0f), 0x7E);  // a tie that would round to 480: saturated
  EXPECT_EQ(float8_encode(t, 1e9f), 0x7E);
  EXPECT_EQ(float8_encode(t, -kInf), 0xFE);
  EXPECT_EQ(float8_encode(t, std::nanf("")), 0x7F);
  EXPECT_TRUE(std::isnan(float8_decode(t, 0x7F)) && std::isnan(float8_decode(t, 0xFF)));
  EXPECT_EQ(float8_decode(t, 0x7E), 448.0f);
}

TEST(Float8, TiesRoundToEven) {
  const DType t = DType::f8e4m3;
  EXPECT_EQ(float8_encode(t, 1.0625f), 0x38);        // halfway between 1 and 1.125: to 1 (even)
  EXPECT_EQ(float8_encode(t, 1.1875f), 0x3A);        // halfway between 1.125 and 1.25: to 1.25
  EXPECT_EQ(float8_encode(t, 0.0009765625f), 0x00);  // half the smallest subnormal: to 0
  EXPECT_EQ(float8_encode(t, 0.0029296875f), 0x02);  // 1.5 subnormal steps: to 2 (even)
}

TEST(Float8, E5m2HasInfinitiesButConversionsSaturate) {
  const DType t = DType::f8e5m2;
  EXPECT_EQ(float8_encode(t, 1.0f), 0x3C);
  EXPECT_EQ(float8_encode(t, 57344.0f), 0x7B);
  EXPECT_EQ(float8_encode(t, kInf), 0x7B);  // satfinite, as PTX's cvt and Triton
  EXPECT_EQ(float8_encode(t, std::nanf("")), 0x7F);
  EXPECT_EQ(float8_decode(t, 0x7C), kInf);
  EXPECT_EQ(float8_decode(t, 0xFC), -kInf);
  EXPECT_TRUE(std::isnan(float8_decode(t, 0x7D)));
  EXPECT_EQ(float8_decode(t, 0x01), std::ldexp(1.0f, -16));
}

TEST(Float8, EveryFiniteByteRoundTrips) {
  for (DType t : {DType::f8e4m3, DType::f8e5m2})
    for (int b = 0; b < 256; ++b) {
      const float v = float8_decode(t, static_cast<uint8_t>(b));
      if (std::isnan(v) || std::isinf(v)) continue;
      EXPECT_EQ(float8_encode(t, v), b) << dtype_name(t) << " byte " << b;
    }
}

}  // namespace
}  // namespace metile::ir
