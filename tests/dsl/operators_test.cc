// Operator overloading: C++ numbers adopt the other operand's dtype, results have the
// builder's types, and mismatches are user errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "metile/dsl/dsl.h"
#include "tests/dsl/ir_query.h"

namespace metile {
namespace {

using namespace metile::dsl;
using ir::OpKind;
using ir::Type;
using ::testing::HasSubstr;

// Traces `fn` and returns the kernel together with the type of the Value fn returns.
struct Traced {
  ir::Kernel kernel;
  Type type;
};
Traced trace_value(const std::function<Value(KernelContext&)>& fn) {
  ir::ValueId id = ir::kNoValue;
  ir::Kernel k = trace("t", [&](KernelContext& c) { id = fn(c).id(); });
  return {k, k.type(id)};
}

// The attribute "value" of the constant feeding operand `i` of the last op.
ir::Attr constant_operand(const ir::Kernel& k, int i) {
  const ir::Op* c = test::producer(k, k.body.ops.back().operands[i]);
  if (c && c->kind == OpKind::Splat) c = test::producer(k, c->operands[0]);
  EXPECT_TRUE(c && c->kind == OpKind::Constant);
  return c->attrs.at("value");
}

std::string error_of(const std::function<void(KernelContext&)>& fn) {
  try {
    trace("t", fn);
  } catch (const UserError& e) {
    return e.rule();
  }
  return "no error";
}

TEST(Operators, IntegerNumberAdoptsTheTileDtype) {
  Traced t = trace_value([](KernelContext&) { return arange(0, 16) + 3; });
  EXPECT_EQ(t.type, Type::tile(ir::DType::i32, {16}));
  EXPECT_EQ(t.kernel.type(t.kernel.body.ops.back().operands[1]), Type::tile(ir::DType::i32, {16}));
  EXPECT_EQ(std::get<int64_t>(constant_operand(t.kernel, 1)), 3);
}

TEST(Operators, IntegerNumberBesideAFloatTileBecomesAFloatConstant) {
  Traced t = trace_value([](KernelContext&) { return 2 * zeros({8}, f16); });
  EXPECT_EQ(t.type, Type::tile(ir::DType::f16, {8}));
  const ir::Op* c = test::producer(t.kernel, t.kernel.body.ops.back().operands[0]);
  c = test::producer(t.kernel, c->operands[0]);
  EXPECT_EQ(t.kernel.type(c->results[0]), Type::scalar(ir::DType::f16));
  EXPECT_DOUBLE_EQ(std::get<double>(c->attrs.at("value")), 2.0);
}

TEST(Operators, FloatNumberBesideAFloatScalar) {
  Traced t = trace_value([](KernelContext& k) { return k.scalar("eps", f32) * 0.5; });
  EXPECT_EQ(t.type, Type::scalar(ir::DType::f32));
  EXPECT_DOUBLE_EQ(std::get<double>(constant_operand(t.kernel, 1)), 0.5);
}

TEST(Operators, FractionalNumberBesideAnIntegerIsAnError) {
  EXPECT_THAT(error_of([](KernelContext&) { arange(0, 8) * 0.5; }),
              HasSubstr("mul: the C++ number 0.500000 is not an integer but the other operand "
                        "is i32"));
}

TEST(Operators, WholeFloatNumberBesideAnIntegerIsAccepted) {
  Traced t = trace_value([](KernelContext&) { return arange(0, 8) * 2.0; });
  EXPECT_EQ(t.type, Type::tile(ir::DType::i32, {8}));
}

TEST(Operators, ComparisonsGiveI1OfTheBroadcastShape) {
  Traced t = trace_value([](KernelContext& k) { return arange(0, 32) < k.scalar("n", i32); });
  EXPECT_EQ(t.type, Type::tile(ir::DType::i1, {32}));
  EXPECT_EQ(t.kernel.body.ops.back().str_attr("pred"), "lt");
  for (auto [pred, fn] : std::vector<std::pair<std::string, std::function<Value(Value)>>>{
           {"le", [](Value a) { return a <= 1; }},
           {"gt", [](Value a) { return a > 1; }},
           {"ge", [](Value a) { return a >= 1; }},
           {"eq", [](Value a) { return a == 1; }},
           {"ne", [](Value a) { return a != 1; }}}) {
    Traced c = trace_value([&](KernelContext&) { return fn(arange(0, 4)); });
    EXPECT_EQ(c.kernel.body.ops.back().str_attr("pred"), pred);
    EXPECT_EQ(c.type, Type::tile(ir::DType::i1, {4}));
  }
}

TEST(Operators, EachOperatorBuildsItsOp) {
  const std::vector<std::pair<OpKind, std::function<Value(Value, Value)>>> cases = {
      {OpKind::Add, [](Value a, Value b) { return a + b; }},
      {OpKind::Sub, [](Value a, Value b) { return a - b; }},
      {OpKind::Mul, [](Value a, Value b) { return a * b; }},
      {OpKind::Div, [](Value a, Value b) { return a / b; }},
      {OpKind::Rem, [](Value a, Value b) { return a % b; }},
      {OpKind::And, [](Value a, Value b) { return a & b; }},
      {OpKind::Or, [](Value a, Value b) { return a | b; }},
      {OpKind::Xor, [](Value a, Value b) { return a ^ b; }},
      {OpKind::Shl, [](Value a, Value b) { return a << b; }},
      {OpKind::Shr, [](Value a, Value b) { return a >> b; }},
      {OpKind::FloorDiv, [](Value a, Value b) { return floordiv(a, b); }},
      {OpKind::Min, [](Value a, Value b) { return minimum(a, b); }},
      {OpKind::Max, [](Value a, Value b) { return maximum(a, b); }},
      {OpKind::Min, [](Value a, Value b) { return min(a, b); }},
      {OpKind::Max, [](Value a, Value b) { return max(a, b); }},
  };
  for (const auto& [kind, fn] : cases) {
    Traced t = trace_value([&](KernelContext&) { return fn(arange(0, 8), arange(8, 16)); });
    EXPECT_EQ(t.kernel.body.ops.back().kind, kind) << ir::op_name(kind);
    EXPECT_EQ(t.type, Type::tile(ir::DType::i32, {8}));
  }
}

TEST(Operators, CompoundAssignmentRebindsTheValue) {
  Traced t = trace_value([](KernelContext&) {
    Value acc = zeros({4}, f32);
    acc += 1.0f;
    acc *= 2;
    return acc;
  });
  EXPECT_EQ(t.kernel.body.ops.back().kind, OpKind::Mul);
  EXPECT_EQ(t.type, Type::tile(ir::DType::f32, {4}));
}

TEST(Operators, UnaryMinusAndBitwiseNot) {
  Traced neg = trace_value([](KernelContext&) { return -zeros({4}, f32); });
  EXPECT_EQ(neg.kernel.body.ops.back().kind, OpKind::Neg);
  Traced inverted = trace_value([](KernelContext&) { return ~(arange(0, 4) < 2); });
  EXPECT_EQ(inverted.kernel.body.ops.back().kind, OpKind::Xor);
  EXPECT_EQ(inverted.type, Type::tile(ir::DType::i1, {4}));
}

// ~ of an 8-bit tile is xor with all ones of its width: -1 for i8, 255 for u8.
TEST(Operators, BitwiseNotOfEightBitIntegers) {
  Traced s = trace_value([](KernelContext&) { return ~arange(0, 4).to(i8); });
  EXPECT_EQ(s.type, Type::tile(ir::DType::i8, {4}));
  EXPECT_EQ(std::get<int64_t>(constant_operand(s.kernel, 1)), -1);
  Traced u = trace_value([](KernelContext&) { return ~arange(0, 4).to(u8); });
  EXPECT_EQ(u.type, Type::tile(ir::DType::u8, {4}));
  EXPECT_EQ(std::get<int64_t>(constant_operand(u.kernel, 1)), 255);
  Traced plus = trace_value([](KernelContext&) { return arange(0, 4).to(u8) + 200; });
  EXPECT_EQ(plus.type, Type::tile(ir::DType::u8, {4}));
  EXPECT_THAT(error_of([](KernelContext&) { arange(0, 4).to(i8) + 200; }),
              HasSubstr("200 does not fit i8"));
}

TEST(Operators, MaskCombinationsStayI1) {
  Traced t = trace_value([](KernelContext&) {
    auto i = arange(0, 16);
    return ((i >= 2) & (i < 10)) | (i == 0);
  });
  EXPECT_EQ(t.type, Type::tile(ir::DType::i1, {16}));
}

TEST(Operators, DtypeMismatchIsAnError) {
  EXPECT_THAT(error_of([](KernelContext&) { zeros({4}, f16) + zeros({4}, f32); }),
              HasSubstr("add: operand dtypes differ"));
}

TEST(Operators, CastAndToConvert) {
  Traced t =
      trace_value([](KernelContext&) { return cast(arange(0, 4), f32) + arange(0, 4).to(f32); });
  EXPECT_EQ(t.type, Type::tile(ir::DType::f32, {4}));
  EXPECT_EQ(test::ops_of(t.kernel, OpKind::Cast).size(), 2u);
}

TEST(Operators, WhereAdoptsTheDtypeOfTheValueChoice) {
  Traced t = trace_value([](KernelContext&) {
    auto i = arange(0, 8);
    return where(i < 4, i.to(f16), 0.0f);
  });
  EXPECT_EQ(t.type, Type::tile(ir::DType::f16, {8}));
  EXPECT_EQ(t.kernel.body.ops.back().kind, OpKind::Select);
}

TEST(Operators, MathFunctionsAndFastForms) {
  Traced t = trace_value([](KernelContext&) {
    auto x = zeros({4}, f32);
    return exp(x) + exp2(x) + log(x) + sqrt(x) + rsqrt(x) + tanh(x) + sin(x) + cos(x) + abs(x) +
           fast_exp(x);
  });
  auto exps = test::ops_of(t.kernel, OpKind::Exp);
  ASSERT_EQ(exps.size(), 2u);
  EXPECT_NE(exps[0]->has_attr("fast"), exps[1]->has_attr("fast"));
  for (OpKind kind : {OpKind::Exp2, OpKind::Log, OpKind::Sqrt, OpKind::Rsqrt, OpKind::Tanh,
                      OpKind::Sin, OpKind::Cos, OpKind::Abs})
    EXPECT_EQ(test::ops_of(t.kernel, kind).size(), 1u) << ir::op_name(kind);
}

TEST(Operators, TwoDimensionalBroadcastWithColAndRow) {
  Traced t = trace_value([](KernelContext&) {
    auto rows = arange(0, 4);
    auto cols = arange(0, 8);
    return rows.col() * 8 + row(cols);
  });
  EXPECT_EQ(t.type, Type::tile(ir::DType::i32, {4, 8}));
  EXPECT_EQ(test::ops_of(t.kernel, OpKind::ExpandDims).size(), 2u);
}

TEST(Operators, ReductionsGiveScalars) {
  Traced t = trace_value([](KernelContext&) {
    auto x = zeros({16}, f32);
    return sum(x) + max(x) + min(x);
  });
  EXPECT_EQ(t.type, Type::scalar(ir::DType::f32));
  std::vector<std::string> kinds;
  for (const ir::Op* op : test::ops_of(t.kernel, OpKind::Reduce))
    kinds.push_back(op->str_attr("kind"));
  EXPECT_THAT(kinds, ::testing::UnorderedElementsAre("sum", "max", "min"));
}

TEST(Operators, SimdCollectivesOnPerThreadScalars) {
  Traced t = trace_value([](KernelContext&) {
    auto v = thread_id().to(f32);
    return simd_sum(v) + simd_max(v) + simd_min(v) + simd_shuffle(v, 3) + simd_shuffle_xor(v, 1) +
           simd_broadcast(v, 0) + simd_shuffle_down(v, 2);
  });
  EXPECT_EQ(t.type, Type::scalar(ir::DType::f32));
  EXPECT_EQ(test::ops_of(t.kernel, OpKind::SimdShuffleXor).size(), 1u);
  EXPECT_EQ(test::ops_of(t.kernel, OpKind::SimdShuffleDown).size(), 1u);
  EXPECT_EQ(test::ops_of(t.kernel, OpKind::SimdSum).size(), 1u);
}

TEST(Operators, TwoNumbersNeedAValue) {
  EXPECT_THAT(error_of([](KernelContext&) { maximum(1, 2); }),
              HasSubstr("max: needs at least one metile Value operand"));
}

}  // namespace
}  // namespace metile
