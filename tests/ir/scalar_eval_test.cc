// The scalar evaluator: each op's semantics per dtype, the edge cases ops.def defines, and
// which values are exact on every target (what constant folding may fold).
#include "metile/ir/scalar_eval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace metile::ir {
namespace {

constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();

Scalar in(DType t, int64_t x) {
  return Scalar::of(t, x);
}
Scalar fp(DType t, double x) {
  return Scalar::of(t, x);
}

Evaluation eval(OpKind k, std::vector<Scalar> x, DType result, Attrs attrs = {}) {
  return evaluate(k, attrs, x, result);
}

// The exact integer value of a binary op on two operands of dtype t.
int64_t int2(OpKind k, DType t, int64_t a, int64_t b) {
  const Evaluation e = eval(k, {in(t, a), in(t, b)}, t);
  EXPECT_EQ(e.outcome, Outcome::exact) << op_name(k) << " " << a << ", " << b << ": " << e.reason;
  return e.value.i;
}

Outcome outcome2(OpKind k, DType t, int64_t a, int64_t b) {
  return eval(k, {in(t, a), in(t, b)}, t).outcome;
}

double f32_2(OpKind k, double a, double b) {
  const Evaluation e = eval(k, {fp(DType::f32, a), fp(DType::f32, b)}, DType::f32);
  EXPECT_EQ(e.outcome, Outcome::exact) << op_name(k) << ": " << e.reason;
  return e.value.f;
}

bool cmp(const char* pred, Scalar a, Scalar b) {
  const Evaluation e = eval(OpKind::Cmp, {a, b}, DType::i1, {{"pred", std::string(pred)}});
  EXPECT_TRUE(e.has_value());
  return e.value.i != 0;
}

Evaluation cast(Scalar a, DType to) {
  return eval(OpKind::Cast, {a}, to);
}

TEST(ScalarValues, WrapToTheirDtype) {
  EXPECT_EQ(wrap_integer(DType::i32, kI32Max + 1), kI32Min);
  EXPECT_EQ(wrap_integer(DType::u32, -1), 4294967295);
  EXPECT_EQ(wrap_integer(DType::i1, 3), 1);
  EXPECT_EQ(wrap_integer(DType::i1, 2), 0);
  EXPECT_EQ(wrap_integer(DType::i64, kI64Min), kI64Min);
  EXPECT_THROW(wrap_integer(DType::f32, 1), InternalError);
  EXPECT_EQ(Scalar::of(DType::i32, 7.9).i, 7);  // a double is truncated
  EXPECT_EQ(Scalar::of_attr(DType::u32, Attr{int64_t{-2}}).i, 4294967294);
  EXPECT_EQ(Scalar::of_attr(DType::f32, Attr{0.1}).f, static_cast<double>(0.1f));
  EXPECT_EQ(std::get<int64_t>(in(DType::i32, 5).to_attr()), 5);
  EXPECT_EQ(std::get<double>(fp(DType::f32, 0.5).to_attr()), 0.5);
}

TEST(ScalarValues, FloatsRoundToNearestEven) {
  EXPECT_EQ(round_float(DType::f16, 1.0 + 1.0 / 4096), 1.0);               // below half an ulp
  EXPECT_EQ(round_float(DType::f16, 1.0 + 3.0 / 2048), 1.0 + 2.0 / 1024);  // ties to even
  EXPECT_EQ(round_float(DType::f16, 65504.0), 65504.0);
  EXPECT_EQ(round_float(DType::f16, 70000.0), INFINITY);
  EXPECT_EQ(round_float(DType::f16, -70000.0), -INFINITY);
  EXPECT_EQ(round_float(DType::f16, std::ldexp(3.0, -26)), std::ldexp(1.0, -24));  // subnormal
  EXPECT_EQ(round_float(DType::bf16, 1.0 + 1.0 / 256), 1.0);
  EXPECT_EQ(round_float(DType::bf16, 1.0 + 3.0 / 256), 1.0 + 4.0 / 256);
  EXPECT_EQ(round_float(DType::f32, 0.1), static_cast<double>(0.1f));
  EXPECT_TRUE(std::isnan(round_float(DType::f16, NAN)));
  EXPECT_THROW(round_float(DType::i32, 1.0), InternalError);
  // Straight from a 64-bit integer to f32, with one rounding.
  const int64_t big = (int64_t{1} << 62) + (int64_t{1} << 38) + 1;
  EXPECT_EQ(Scalar::of(DType::f32, big).f, static_cast<double>(static_cast<float>(big)));
}

TEST(ScalarEval, IntegerArithmeticWrapsAround) {
  EXPECT_EQ(int2(OpKind::Add, DType::i32, kI32Max, 1), kI32Min);
  EXPECT_EQ(int2(OpKind::Sub, DType::i32, kI32Min, 1), kI32Max);
  EXPECT_EQ(int2(OpKind::Mul, DType::i32, 65536, 65536), 0);
  EXPECT_EQ(int2(OpKind::Sub, DType::u32, 0, 1), 4294967295);
  EXPECT_EQ(int2(OpKind::Add, DType::i64, std::numeric_limits<int64_t>::max(), 1), kI64Min);
  EXPECT_EQ(int2(OpKind::Mul, DType::i64, 3, -7), -21);
  EXPECT_EQ(int2(OpKind::Add, DType::i1, 1, 1), 0);
}

TEST(ScalarEval, DivisionTruncatesFloorDivRoundsDownRemHasTheSignOfA) {
  EXPECT_EQ(int2(OpKind::Div, DType::i32, -7, 2), -3);
  EXPECT_EQ(int2(OpKind::Div, DType::i32, 7, -2), -3);
  EXPECT_EQ(int2(OpKind::FloorDiv, DType::i32, -7, 2), -4);
  EXPECT_EQ(int2(OpKind::FloorDiv, DType::i32, 7, -2), -4);
  EXPECT_EQ(int2(OpKind::FloorDiv, DType::i32, -8, 2), -4);
  EXPECT_EQ(int2(OpKind::FloorDiv, DType::i32, 7, 2), 3);
  EXPECT_EQ(int2(OpKind::FloorDiv, DType::i64, -1, kI64Min), 0);
  EXPECT_EQ(int2(OpKind::Rem, DType::i32, -7, 2), -1);
  EXPECT_EQ(int2(OpKind::Rem, DType::i32, 7, -2), 1);
  // u32 operands are unsigned: -2 is 4294967294.
  EXPECT_EQ(int2(OpKind::Div, DType::u32, -2, 2), 2147483647);
  EXPECT_EQ(int2(OpKind::FloorDiv, DType::u32, 7, 2), 3);
  EXPECT_EQ(int2(OpKind::Rem, DType::u32, -1, 10), 5);
}

TEST(ScalarEval, IntegerDivisionFaultsAreUndefined) {
  for (OpKind k : {OpKind::Div, OpKind::Rem, OpKind::FloorDiv}) {
    EXPECT_EQ(outcome2(k, DType::i32, 5, 0), Outcome::undefined);
    EXPECT_EQ(outcome2(k, DType::u32, 5, 0), Outcome::undefined);
    EXPECT_EQ(outcome2(k, DType::i32, kI32Min, -1), Outcome::undefined);
    EXPECT_EQ(outcome2(k, DType::i64, kI64Min, -1), Outcome::undefined);
    // Only the dtype's own minimum overflows: in i64, INT32_MIN / -1 is fine.
    EXPECT_EQ(outcome2(k, DType::i64, kI32Min, -1), Outcome::exact);
    EXPECT_EQ(outcome2(k, DType::u32, 0x80000000LL, -1), Outcome::exact);
  }
  EXPECT_STREQ(eval(OpKind::Div, {in(DType::i32, 1), in(DType::i32, 0)}, DType::i32).reason,
               "integer division by zero");
}

TEST(ScalarEval, ShiftsAreArithmeticForSignedTypesAndBoundedByTheWidth) {
  EXPECT_EQ(int2(OpKind::Shl, DType::i32, 1, 31), kI32Min);
  EXPECT_EQ(int2(OpKind::Shl, DType::i32, 3, 31), kI32Min);  // bits shifted out are lost
  EXPECT_EQ(int2(OpKind::Shr, DType::i32, -8, 1), -4);
  EXPECT_EQ(int2(OpKind::Shr, DType::u32, -8, 1), 0x7ffffffc);
  EXPECT_EQ(int2(OpKind::Shl, DType::i64, 1, 40), int64_t{1} << 40);
  EXPECT_EQ(int2(OpKind::Shr, DType::i64, kI64Min, 63), -1);
  EXPECT_EQ(outcome2(OpKind::Shl, DType::i32, 1, 32), Outcome::undefined);
  EXPECT_EQ(outcome2(OpKind::Shr, DType::i32, 1, -1), Outcome::undefined);
  EXPECT_EQ(outcome2(OpKind::Shl, DType::i64, 1, 64), Outcome::undefined);
  EXPECT_EQ(outcome2(OpKind::Shl, DType::i1, 1, 1), Outcome::undefined);
  EXPECT_EQ(int2(OpKind::Shl, DType::i1, 1, 0), 1);
}

TEST(ScalarEval, BitwiseMinAndMax) {
  EXPECT_EQ(int2(OpKind::And, DType::i32, 12, 10), 8);
  EXPECT_EQ(int2(OpKind::Or, DType::i32, 12, 10), 14);
  EXPECT_EQ(int2(OpKind::Xor, DType::i32, 12, 10), 6);
  EXPECT_EQ(int2(OpKind::Xor, DType::i1, 1, 1), 0);
  EXPECT_EQ(int2(OpKind::Min, DType::i32, -3, 2), -3);
  EXPECT_EQ(int2(OpKind::Min, DType::u32, -3, 2), 2);  // 4294967293 is large
  EXPECT_EQ(int2(OpKind::Max, DType::i64, kI64Min, 0), 0);
  EXPECT_EQ(eval(OpKind::And, {fp(DType::f32, 1), fp(DType::f32, 1)}, DType::f32).outcome,
            Outcome::unsupported);
}

TEST(ScalarEval, FloatArithmeticRoundsOnceToTheDtype) {
  EXPECT_EQ(f32_2(OpKind::Add, 0.1, 0.2), static_cast<double>(0.1f + 0.2f));
  EXPECT_EQ(f32_2(OpKind::Mul, 1.0 / 3, 3.0), static_cast<double>((1.0f / 3) * 3.0f));
  EXPECT_EQ(f32_2(OpKind::Div, 1.0, 3.0), static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(f32_2(OpKind::Div, 1.0, 0.0), INFINITY);
  EXPECT_EQ(f32_2(OpKind::Rem, -7.5, 2.0), -1.5);
  EXPECT_EQ(f32_2(OpKind::Add, 3e38, 3e38), INFINITY);
  EXPECT_EQ(f32_2(OpKind::Min, -1.0, 2.0), -1.0);
  EXPECT_EQ(f32_2(OpKind::Max, -1.0, 2.0), 2.0);
  // f16: the value is rounded to f16, and only a reference (targets may keep more bits).
  const Evaluation h =
      eval(OpKind::Add, {fp(DType::f16, 1.0), fp(DType::f16, 1.0 / 4096)}, DType::f16);
  EXPECT_EQ(h.outcome, Outcome::approximate);
  EXPECT_EQ(h.value.f, 1.0);
  const Evaluation b =
      eval(OpKind::Mul, {fp(DType::bf16, 3.0), fp(DType::bf16, 1.0 / 3)}, DType::bf16);
  EXPECT_EQ(b.outcome, Outcome::approximate);
  EXPECT_EQ(b.value.f, round_float(DType::bf16, 3.0 * round_float(DType::bf16, 1.0 / 3)));
}

TEST(ScalarEval, FloatMinMaxOnNaNAndSignedZerosIsOnlyAReference) {
  auto minmax = [](OpKind k, double a, double b) {
    return eval(k, {fp(DType::f32, a), fp(DType::f32, b)}, DType::f32);
  };
  EXPECT_EQ(minmax(OpKind::Min, NAN, 1.0).outcome, Outcome::approximate);
  EXPECT_EQ(minmax(OpKind::Min, NAN, 1.0).value.f, 1.0);  // fmin: the number
  EXPECT_EQ(minmax(OpKind::Max, 1.0, NAN).value.f, 1.0);
  EXPECT_EQ(minmax(OpKind::Max, 0.0, -0.0).outcome, Outcome::approximate);
  EXPECT_EQ(minmax(OpKind::Max, 0.5, -0.0).outcome, Outcome::exact);
}

TEST(ScalarEval, FloatFloorDivIsFloorOfTheRoundedQuotient) {
  const Evaluation e = eval(OpKind::FloorDiv, {fp(DType::f32, -7), fp(DType::f32, 2)}, DType::f32);
  EXPECT_EQ(e.outcome, Outcome::approximate);
  EXPECT_EQ(e.value.f, -4.0);
}

TEST(ScalarEval, ComparisonsOnEveryPredicate) {
  const Scalar a = in(DType::i32, -1), b = in(DType::i32, 2);
  EXPECT_TRUE(cmp("lt", a, b));
  EXPECT_TRUE(cmp("le", a, b));
  EXPECT_FALSE(cmp("gt", a, b));
  EXPECT_FALSE(cmp("ge", a, b));
  EXPECT_FALSE(cmp("eq", a, b));
  EXPECT_TRUE(cmp("ne", a, b));
  EXPECT_TRUE(cmp("ge", b, b));
  // Unsigned: -1 is the largest u32.
  EXPECT_TRUE(cmp("gt", in(DType::u32, -1), in(DType::u32, 2)));
  // Exact beyond 2^53 (no detour through double).
  const int64_t big = int64_t{1} << 60;
  EXPECT_TRUE(cmp("lt", in(DType::i64, big), in(DType::i64, big + 1)));
  // NaN compares unequal to everything, itself included.
  EXPECT_FALSE(cmp("eq", fp(DType::f32, NAN), fp(DType::f32, NAN)));
  EXPECT_TRUE(cmp("ne", fp(DType::f32, NAN), fp(DType::f32, NAN)));
  EXPECT_FALSE(cmp("lt", fp(DType::f32, NAN), fp(DType::f32, 1)));
  EXPECT_TRUE(cmp("eq", fp(DType::f32, 0.0), fp(DType::f32, -0.0)));
  EXPECT_THROW(eval(OpKind::Cmp, {a, b}, DType::i1, {{"pred", std::string("gtt")}}), InternalError);
}

TEST(ScalarEval, SelectPicksByTheCondition) {
  const Scalar yes = in(DType::i1, 1), no = in(DType::i1, 0);
  const Scalar a = fp(DType::f32, 1.5), b = fp(DType::f32, -2);
  EXPECT_EQ(eval(OpKind::Select, {yes, a, b}, DType::f32).value.f, 1.5);
  EXPECT_EQ(eval(OpKind::Select, {no, a, b}, DType::f32).value.f, -2.0);
  EXPECT_EQ(eval(OpKind::Select, {no, a, b}, DType::f32).outcome, Outcome::exact);
}

TEST(ScalarEval, CastsTruncateFloatsAndWrapIntegers) {
  EXPECT_EQ(cast(fp(DType::f32, -2.7), DType::i32).value.i, -2);
  EXPECT_EQ(cast(fp(DType::f32, 2.7), DType::u32).value.i, 2);
  EXPECT_EQ(cast(fp(DType::f32, -0.5), DType::u32).value.i, 0);
  EXPECT_EQ(cast(fp(DType::f32, 0.5), DType::i1).value.i, 1);  // nonzero is true
  EXPECT_EQ(cast(fp(DType::f32, NAN), DType::i1).value.i, 1);
  EXPECT_EQ(cast(fp(DType::f32, 3e9), DType::i64).value.i, 3000000000);
  EXPECT_EQ(cast(in(DType::i32, -1), DType::u32).value.i, 4294967295);
  EXPECT_EQ(cast(in(DType::u32, 4294967295), DType::i32).value.i, -1);
  EXPECT_EQ(cast(in(DType::i64, (int64_t{1} << 32) + 5), DType::i32).value.i, 5);
  EXPECT_EQ(cast(in(DType::i32, 2), DType::i1).value.i, 1);  // nonzero is true, not bit 0
  EXPECT_EQ(cast(in(DType::i32, 16777217), DType::f32).value.f, 16777216.0);
  EXPECT_EQ(cast(fp(DType::f32, 0.1), DType::f32).outcome, Outcome::exact);
  EXPECT_EQ(cast(fp(DType::f32, 3e9), DType::i32).outcome, Outcome::undefined);
  EXPECT_EQ(cast(fp(DType::f32, -1.0), DType::u32).outcome, Outcome::undefined);
  EXPECT_EQ(cast(fp(DType::f32, NAN), DType::i32).outcome, Outcome::undefined);
  EXPECT_EQ(cast(fp(DType::f32, INFINITY), DType::i64).outcome, Outcome::undefined);
  // To and from f16 and bf16: rounded, and only a reference.
  const Evaluation h = cast(fp(DType::f32, 1.0 + 1.0 / 4096), DType::f16);
  EXPECT_EQ(h.outcome, Outcome::approximate);
  EXPECT_EQ(h.value.f, 1.0);
  EXPECT_EQ(cast(fp(DType::f32, 1e5), DType::f16).value.f, INFINITY);
  EXPECT_EQ(cast(fp(DType::bf16, 2.5), DType::i32).value.i, 2);
  EXPECT_EQ(cast(fp(DType::bf16, 2.5), DType::i32).outcome, Outcome::approximate);
}

TEST(ScalarEval, NegAndAbs) {
  EXPECT_EQ(eval(OpKind::Neg, {in(DType::i32, kI32Min)}, DType::i32).value.i, kI32Min);
  EXPECT_EQ(eval(OpKind::Neg, {in(DType::i32, 5)}, DType::i32).value.i, -5);
  EXPECT_EQ(eval(OpKind::Abs, {in(DType::i32, -5)}, DType::i32).value.i, 5);
  EXPECT_EQ(eval(OpKind::Abs, {in(DType::i32, kI32Min)}, DType::i32).outcome, Outcome::undefined);
  EXPECT_EQ(eval(OpKind::Abs, {in(DType::i64, kI32Min)}, DType::i64).value.i, -kI32Min);
  EXPECT_EQ(eval(OpKind::Abs, {in(DType::u32, -5)}, DType::u32).value.i, 4294967291);
  const Evaluation n = eval(OpKind::Neg, {fp(DType::f32, 0.0)}, DType::f32);
  EXPECT_TRUE(std::signbit(n.value.f));
  EXPECT_EQ(eval(OpKind::Abs, {fp(DType::f32, -0.0)}, DType::f32).value.f, 0.0);
  EXPECT_FALSE(std::signbit(eval(OpKind::Abs, {fp(DType::f32, -0.0)}, DType::f32).value.f));
}

TEST(ScalarEval, EightBitIntegersWrapInEightBits) {
  EXPECT_EQ(wrap_integer(DType::i8, 128), -128);
  EXPECT_EQ(wrap_integer(DType::i8, 255), -1);
  EXPECT_EQ(wrap_integer(DType::u8, -1), 255);
  EXPECT_EQ(wrap_integer(DType::u8, 256 + 7), 7);
  EXPECT_EQ(int2(OpKind::Add, DType::i8, 127, 1), -128);
  EXPECT_EQ(int2(OpKind::Sub, DType::i8, -128, 1), 127);
  EXPECT_EQ(int2(OpKind::Mul, DType::i8, 16, 16), 0);
  EXPECT_EQ(int2(OpKind::Mul, DType::i8, -7, 20), -140 + 256);
  EXPECT_EQ(int2(OpKind::Add, DType::u8, 200, 100), 44);
  EXPECT_EQ(int2(OpKind::Sub, DType::u8, 0, 1), 255);
  EXPECT_EQ(int2(OpKind::Mul, DType::u8, 16, 17), 16);
  EXPECT_EQ(eval(OpKind::Neg, {in(DType::i8, -128)}, DType::i8).value.i, -128);
  EXPECT_EQ(eval(OpKind::Neg, {in(DType::u8, 1)}, DType::u8).value.i, 255);
  // C computes 8-bit values in int: |-128| and -128 / -1 are 128, wrapped back to -128.
  EXPECT_EQ(eval(OpKind::Abs, {in(DType::i8, -128)}, DType::i8).outcome, Outcome::exact);
  EXPECT_EQ(eval(OpKind::Abs, {in(DType::i8, -128)}, DType::i8).value.i, -128);
  EXPECT_EQ(eval(OpKind::Abs, {in(DType::i8, -5)}, DType::i8).value.i, 5);
  EXPECT_EQ(int2(OpKind::Div, DType::i8, -128, -1), -128);
  EXPECT_EQ(int2(OpKind::Div, DType::i8, -7, 2), -3);
  EXPECT_EQ(int2(OpKind::FloorDiv, DType::i8, -7, 2), -4);
  EXPECT_EQ(int2(OpKind::Rem, DType::i8, -7, 2), -1);
  EXPECT_EQ(int2(OpKind::Div, DType::u8, 250, 7), 35);
  EXPECT_EQ(outcome2(OpKind::Div, DType::u8, 1, 0), Outcome::undefined);
}

// Constant folding computes what the emitted code computes: 16-bit integers wrap and
// saturate from floats as the 8-bit ones do; an fp8 value is its format's rounding of the
// f32 value (nearest even, saturating, NaN kept), f64 keeps a double.
TEST(ScalarEval, SixteenBitFp8AndDoubleValues) {
  EXPECT_EQ(int2(OpKind::Add, DType::i16, 32767, 1), -32768);
  EXPECT_EQ(int2(OpKind::Mul, DType::u16, 256, 256), 0);
  EXPECT_EQ(eval(OpKind::Cast, {fp(DType::f32, 1e6)}, DType::i16).value.i, 32767);
  EXPECT_EQ(eval(OpKind::Cast, {fp(DType::f32, -5.5)}, DType::u16).value.i, 0);
  EXPECT_EQ(eval(OpKind::Cast, {fp(DType::f32, NAN)}, DType::i16).value.i, 0);
  EXPECT_EQ(fp(DType::f8e4m3, 1.0625).f, 1.0);  // a tie, to the even neighbour
  EXPECT_EQ(fp(DType::f8e4m3, 1e6).f, 448.0);   // saturated
  EXPECT_EQ(fp(DType::f8e5m2, INFINITY).f, 57344.0);
  EXPECT_TRUE(std::isnan(fp(DType::f8e5m2, NAN).f));
  EXPECT_EQ(eval(OpKind::Cast, {fp(DType::f32, 300.0)}, DType::f8e4m3).value.f, 288.0);
  EXPECT_EQ(fp(DType::f64, 0.1).f, 0.1);
  EXPECT_EQ(eval(OpKind::Cast, {in(DType::i64, (int64_t{1} << 53) + 1)}, DType::f64).value.f,
            9007199254740992.0);
}

TEST(ScalarEval, EightBitComparisonsBitwiseShiftsMinMax) {
  EXPECT_TRUE(cmp("lt", in(DType::i8, -1), in(DType::i8, 1)));
  EXPECT_TRUE(cmp("gt", in(DType::u8, -1), in(DType::u8, 1)));  // -1 is u8 255
  EXPECT_EQ(int2(OpKind::Min, DType::i8, -100, 100), -100);
  EXPECT_EQ(int2(OpKind::Max, DType::u8, 200, 100), 200);
  EXPECT_EQ(int2(OpKind::Xor, DType::u8, 0xF0, 0xFF), 0x0F);
  EXPECT_EQ(int2(OpKind::And, DType::i8, -1, 0x7F), 0x7F);
  EXPECT_EQ(int2(OpKind::Shl, DType::i8, 1, 7), -128);
  EXPECT_EQ(int2(OpKind::Shl, DType::u8, 0xFF, 4), 0xF0);
  EXPECT_EQ(int2(OpKind::Shr, DType::i8, -128, 7), -1);  // arithmetic
  EXPECT_EQ(int2(OpKind::Shr, DType::u8, 0x80, 7), 1);   // logical
  EXPECT_EQ(outcome2(OpKind::Shl, DType::i8, 1, 8), Outcome::undefined);
  EXPECT_EQ(outcome2(OpKind::Shr, DType::u8, 1, 8), Outcome::undefined);
}

TEST(ScalarEval, FloatsConvertToEightBitsSaturatingAndNaNToZero) {
  EXPECT_EQ(cast(fp(DType::f32, -2.7), DType::i8).value.i, -2);
  EXPECT_EQ(cast(fp(DType::f32, 2.7), DType::u8).value.i, 2);
  EXPECT_EQ(cast(fp(DType::f32, 127.9), DType::i8).value.i, 127);
  EXPECT_EQ(cast(fp(DType::f32, 300.0), DType::i8).value.i, 127);
  EXPECT_EQ(cast(fp(DType::f32, -300.0), DType::i8).value.i, -128);
  EXPECT_EQ(cast(fp(DType::f32, 256.0), DType::u8).value.i, 255);
  EXPECT_EQ(cast(fp(DType::f32, -1.5), DType::u8).value.i, 0);
  EXPECT_EQ(cast(fp(DType::f32, INFINITY), DType::u8).value.i, 255);
  EXPECT_EQ(cast(fp(DType::f32, -INFINITY), DType::i8).value.i, -128);
  EXPECT_EQ(cast(fp(DType::f32, NAN), DType::i8).value.i, 0);
  for (DType t : {DType::i8, DType::u8})
    for (double v : {1e9, -1e9, double(NAN)})
      EXPECT_EQ(cast(fp(DType::f32, v), t).outcome, Outcome::exact) << dtype_name(t) << " " << v;
  // Integers wrap; i8 and u8 widen by sign and zero extension.
  EXPECT_EQ(cast(in(DType::i32, 300), DType::i8).value.i, 44);
  EXPECT_EQ(cast(in(DType::i32, -129), DType::i8).value.i, 127);
  EXPECT_EQ(cast(in(DType::i32, -1), DType::u8).value.i, 255);
  EXPECT_EQ(cast(in(DType::i8, -1), DType::u8).value.i, 255);
  EXPECT_EQ(cast(in(DType::u8, 255), DType::i8).value.i, -1);
  EXPECT_EQ(cast(in(DType::i8, -1), DType::i32).value.i, -1);
  EXPECT_EQ(cast(in(DType::i8, -1), DType::u32).value.i, 4294967295);
  EXPECT_EQ(cast(in(DType::u8, 255), DType::i32).value.i, 255);
  EXPECT_EQ(cast(in(DType::u8, 2), DType::i1).value.i, 1);
  EXPECT_EQ(cast(in(DType::i8, -3), DType::f32).value.f, -3.0);
  EXPECT_EQ(eval(OpKind::Constant, {}, DType::u8, {{"value", int64_t{-1}}}).value.i, 255);
}

TEST(ScalarEval, FloorAndCeilAreExact) {
  for (double v : {-2.5, -0.5, 0.7, 3.0}) {
    const Evaluation f = eval(OpKind::Floor, {fp(DType::f32, v)}, DType::f32);
    const Evaluation c = eval(OpKind::Ceil, {fp(DType::f16, v)}, DType::f16);
    EXPECT_EQ(f.outcome, Outcome::exact);
    EXPECT_EQ(f.value.f, std::floor(v));
    EXPECT_EQ(c.value.f, std::ceil(v));
  }
}

TEST(ScalarEval, MathFunctionsGiveARoundedReference) {
  const Scalar x = fp(DType::f32, 0.7);
  const double v = x.f;
  const std::pair<OpKind, double> cases[] = {
      {OpKind::Exp, std::exp(v)},   {OpKind::Exp2, std::exp2(v)},      {OpKind::Log, std::log(v)},
      {OpKind::Sqrt, std::sqrt(v)}, {OpKind::Rsqrt, 1 / std::sqrt(v)}, {OpKind::Tanh, std::tanh(v)},
      {OpKind::Sin, std::sin(v)},   {OpKind::Cos, std::cos(v)}};
  for (const auto& [kind, expected] : cases) {
    const Evaluation e = eval(kind, {x}, DType::f32, {{"fast", int64_t{1}}});
    EXPECT_EQ(e.outcome, Outcome::approximate) << op_name(kind);
    EXPECT_EQ(e.value.f, round_float(DType::f32, expected)) << op_name(kind);
  }
  const Evaluation h = eval(OpKind::Exp, {fp(DType::f16, 1.0)}, DType::f16);
  EXPECT_EQ(h.value.f, round_float(DType::f16, std::exp(1.0)));
}

TEST(ScalarEval, ConstantsAreValuesOfTheirDtype) {
  EXPECT_EQ(eval(OpKind::Constant, {}, DType::f32, {{"value", 0.1}}).value.f,
            static_cast<double>(0.1f));
  EXPECT_EQ(eval(OpKind::Constant, {}, DType::f16, {{"value", int64_t{3}}}).value.f, 3.0);
  EXPECT_EQ(eval(OpKind::Constant, {}, DType::i32, {{"value", int64_t{1} << 31}}).value.i, kI32Min);
}

TEST(ScalarEval, OpsThatAreNotScalarComputationsAreUnsupported) {
  EXPECT_EQ(eval(OpKind::Load, {in(DType::i32, 0)}, DType::f32).outcome, Outcome::unsupported);
  EXPECT_EQ(eval(OpKind::ProgramId, {}, DType::i32).outcome, Outcome::unsupported);
  EXPECT_EQ(eval(OpKind::Exp, {in(DType::i32, 1)}, DType::i32).outcome, Outcome::unsupported);
  EXPECT_THROW(eval(OpKind::Add, {in(DType::i32, 1)}, DType::i32), InternalError);
  EXPECT_THROW(eval(OpKind::Add, {in(DType::i32, 1), in(DType::i64, 1)}, DType::i32),
               InternalError);
}

}  // namespace
}  // namespace metile::ir
