// Vector types, math and type punning of the host metal_stdlib, used as plain C++.
#include <gtest/gtest.h>

#include <cmath>

// Last: it defines the MSL address-space keywords as macros.
#include "metile/runtime/host/metal_stdlib.h"

namespace {

using namespace metal;

TEST(MslVectors, LayoutMatchesMsl) {
  EXPECT_EQ(sizeof(float3), 16u);
  EXPECT_EQ(alignof(float4), 16u);
  EXPECT_EQ(sizeof(packed_float3), 12u);
  EXPECT_EQ(sizeof(half4), 8u);
  EXPECT_EQ(sizeof(bool4), 4u);
  EXPECT_EQ(sizeof(long2), 16u);
}

TEST(MslVectors, ConstructorsAndComponents) {
  const float4 a(1.0f, 2.0f, 3.0f, 4.0f);
  EXPECT_EQ(a.x + a.y + a.z + a.w, 10.0f);
  const float4 b(float2(5.0f, 6.0f), 7, 8.0f);
  EXPECT_EQ(b[2], 7.0f);
  const float4 c(float3(1.0f), 9.0f);
  EXPECT_EQ(c.w, 9.0f);
  EXPECT_EQ(c.x, 1.0f);
  const int4 i(a);
  EXPECT_EQ(i.w, 4);
  const half2 h = half2(1.5f);
  EXPECT_EQ(float(h.y), 1.5f);
  const packed_float4 p = a;
  const float4 back = p;
  EXPECT_TRUE(all(back == a));
}

TEST(MslVectors, ComponentwiseArithmeticAndComparisons) {
  const float4 a(1.0f, -2.0f, 3.0f, -4.0f);
  const float4 r = a * 2.0f + 1.0f;
  EXPECT_EQ(r.y, -3.0f);
  const int4 s = int4(1, 2, 3, 4) << 2;
  EXPECT_EQ(s.z, 12);
  const bool4 neg = a < 0.0f;
  EXPECT_TRUE(any(neg));
  EXPECT_FALSE(all(neg));
  EXPECT_TRUE(all(select(float4(0.0f), float4(1.0f), neg) == float4(0, 1, 0, 1)));
  uint2 u(3u, 5u);
  u += 1u;
  EXPECT_EQ(u.y, 6u);
  EXPECT_EQ((-a).w, 4.0f);
}

TEST(MslMath, FunctionsForScalarsAndVectors) {
  EXPECT_FLOAT_EQ(exp(1.0f), std::exp(1.0f));
  EXPECT_FLOAT_EQ(fast::exp2(3.0f), 8.0f);
  EXPECT_FLOAT_EQ(precise::rsqrt(4.0f), 0.5f);
  EXPECT_EQ(float(tanh(half(0.5f))), float(half(std::tanh(0.5f))));
  EXPECT_EQ(max(3, 7), 7);
  EXPECT_EQ(min(3u, 7u), 3u);
  EXPECT_EQ(abs(-3), 3);
  EXPECT_EQ(clamp(5.0f, 0.0f, 1.0f), 1.0f);
  EXPECT_EQ(fmax(NAN, 1.0f), 1.0f);
  EXPECT_TRUE(isnan(NAN));
  EXPECT_TRUE(isinf(half(70000.0f)));
  EXPECT_EQ(fma(2.0f, 3.0f, 1.0f), 7.0f);
  EXPECT_EQ(floor(-1.5f), -2.0f);
  EXPECT_EQ(fmod(7.0f, 4.0f), 3.0f);
  EXPECT_EQ(pow(2.0f, 10.0f), 1024.0f);
  EXPECT_EQ(select(1.0f, 2.0f, true), 2.0f);
  const float4 v = sqrt(float4(1.0f, 4.0f, 9.0f, 16.0f));
  EXPECT_EQ(v.w, 4.0f);
  EXPECT_EQ(max(float4(1.0f, 5.0f, 2.0f, 0.0f), 2.0f).y, 5.0f);
  EXPECT_TRUE(all(isnan(float2(NAN, NAN))));
  EXPECT_EQ(dot(float2(1.0f, 2.0f), float2(3.0f, 4.0f)), 11.0f);
}

TEST(MslMath, AsTypeReinterpretsBits) {
  EXPECT_EQ(as_type<uint>(1.0f), 0x3f800000u);
  EXPECT_EQ(as_type<ushort>(half(1.0f)), 0x3c00);
  EXPECT_EQ(as_type<float>(0x40000000u), 2.0f);
  EXPECT_EQ(as_type<uint2>(1.0).y, 0x3ff00000u);
  EXPECT_EQ(as_type<half2>(0x3c003c00u).x, half(1.0f));
}

}  // namespace
