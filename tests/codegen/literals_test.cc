// Constants render as literals that read back as exactly the value of their dtype.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "metile/codegen/literals.h"
#include "metile/codegen/msl/msl_dialect.h"

namespace metile::codegen {
namespace {

using ir::DType;

std::string lit(ir::Attr v, DType t) {
  return constant_literal(v, t, msl_dialect());
}

TEST(FloatLiteral, ReadsBackExactly) {
  for (float v : {0.1f, 1.0f / 3.0f, 3.4028235e38f, 1.17549435e-38f, 1e-45f, -2.5f, 16777217.0f,
                  123456.789f}) {
    std::string text = float_literal(v);
    ASSERT_EQ(text.back(), 'f') << text;
    text.pop_back();
    EXPECT_EQ(std::strtof(text.c_str(), nullptr), v) << text;
  }
}

TEST(FloatLiteral, Spellings) {
  EXPECT_EQ(float_literal(1.0f), "1.0f");
  EXPECT_EQ(float_literal(-0.0f), "-0.0f");
  EXPECT_EQ(float_literal(0.1f), "0.100000001f");
  EXPECT_EQ(float_literal(1e10f), "1e+10f");
}

TEST(RoundToDtype, NarrowFormatsRoundToNearestEven) {
  EXPECT_EQ(round_to_dtype(1.0 + 1.0 / 2048, DType::f16), 1.0);  // tie, to even
  EXPECT_EQ(round_to_dtype(1.0 + 3.0 / 2048, DType::f16), 1.0 + 2.0 / 1024);
  EXPECT_EQ(round_to_dtype(65520.0, DType::f16), INFINITY);  // rounds past the largest
  EXPECT_EQ(round_to_dtype(65519.0, DType::f16), 65504.0);
  EXPECT_EQ(round_to_dtype(std::ldexp(1.0, -25) * 3, DType::f16), std::ldexp(1.0, -23));
  EXPECT_EQ(round_to_dtype(0.1, DType::bf16), 0.10009765625);
  EXPECT_EQ(round_to_dtype(0.1, DType::f32), static_cast<double>(0.1f));
  EXPECT_TRUE(std::isnan(round_to_dtype(NAN, DType::f16)));
}

TEST(ConstantLiteral, EveryDtype) {
  EXPECT_EQ(lit(2.0, DType::f32), "2.0f");
  EXPECT_EQ(lit(int64_t{3}, DType::f32), "3.0f");
  EXPECT_EQ(lit(-INFINITY, DType::f32), "-INFINITY");
  EXPECT_EQ(lit(INFINITY, DType::f32), "INFINITY");
  EXPECT_EQ(lit(NAN, DType::f32), "NAN");
  EXPECT_EQ(lit(1e39, DType::f32), "INFINITY");  // rounds past the largest float
  EXPECT_EQ(lit(1.5, DType::f16), "half(1.5f)");
  EXPECT_EQ(lit(1e6, DType::f16), "half(INFINITY)");
  EXPECT_EQ(lit(NAN, DType::bf16), "bfloat(NAN)");
  EXPECT_EQ(lit(int64_t{-7}, DType::i32), "-7");
  EXPECT_EQ(lit(int64_t{-2147483648}, DType::i32), "(-2147483647 - 1)");
  EXPECT_EQ(lit(int64_t{4000000000}, DType::u32), "4000000000u");
  EXPECT_EQ(lit(int64_t{1} << 40, DType::i64), "1099511627776l");
  EXPECT_EQ(lit(int64_t{1}, DType::i1), "true");
  EXPECT_EQ(lit(4.0, DType::i32), "4");
}

TEST(ConstantLiteral, OutOfRangeIsAnError) {
  EXPECT_THROW(lit(int64_t{1} << 31, DType::i32), UserError);
  EXPECT_THROW(lit(int64_t{-1}, DType::u32), UserError);
  EXPECT_THROW(lit(2.5, DType::i32), UserError);
}

}  // namespace
}  // namespace metile::codegen
