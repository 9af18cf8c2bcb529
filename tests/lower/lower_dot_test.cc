// dot lowered both ways: the generic exchange, run in the Metal IR interpreter against a plain
// C++ product; the SIMD-group path chosen where the SIMD groups tile the output, the generic
// one when the plan asks for it (ThreadPlan::dot_matrix_fragments) or no grid fits; and a
// loop-carried accumulator kept in fragments across iterations.
#include <gtest/gtest.h>

#include "metile/ir/builder.h"
#include "metile/lower/plan_threads.h"
#include "tests/lower/lowering_harness.h"

namespace metile::lower_test {
namespace {

using ir::DType;
using ir::OpKind;
using ir::TileBuilder;
using ir::ValueId;

float element(int64_t i, int64_t j, int64_t salt) {
  return static_cast<float>((i * 7 + j * 3 + salt) % 9 - 4) * 0.5f;
}

// c = a @ b + 1 for row-major f32 a [m, k] and b [k, n] read from the first two buffers;
// with `loop`, the K dimension is consumed 8 columns at a time by a loop-carried dot.
ir::Kernel product(int64_t m, int64_t n, int64_t k, bool loop) {
  ir::Kernel kernel;
  kernel.name = "product";
  TileBuilder b(kernel);
  const ValueId a = b.add_param("a", ir::Type::ptr(DType::f32), "read");
  const ValueId bb = b.add_param("b", ir::Type::ptr(DType::f32), "read");
  const ValueId c = b.add_param("c", ir::Type::ptr(DType::f32), "write");
  auto tile = [&](ValueId base, ValueId first_row, int64_t rows, int64_t columns, int64_t stride) {
    const ValueId r = b.binary(OpKind::Add, b.expand_dims(b.arange(0, rows), 1), first_row);
    const ValueId offsets = b.binary(OpKind::Add, b.binary(OpKind::Mul, r, b.constant_int(stride)),
                                     b.expand_dims(b.arange(0, columns), 0));
    return b.load(b.ptr_add(base, offsets));
  };
  const ValueId one = b.full({m, n}, 1.0, DType::f32);
  ValueId result;
  if (!loop) {
    result = b.dot(tile(a, b.constant_int(0), m, k, k), tile(bb, b.constant_int(0), k, n, n), one);
  } else {
    const ir::Builder::ForScope scope =
        b.begin_for(b.constant_int(0), b.constant_int(k), b.constant_int(8), {one});
    // a [m, 8] slice of a whose columns start at the induction variable.
    const ValueId columns =
        b.binary(OpKind::Add, b.expand_dims(b.arange(0, 8), 0), scope.induction_var);
    const ValueId a_offsets = b.binary(
        OpKind::Add, b.binary(OpKind::Mul, b.expand_dims(b.arange(0, m), 1), b.constant_int(k)),
        columns);
    const ValueId a_slice = b.load(b.ptr_add(a, a_offsets));
    const ValueId next = b.dot(a_slice, tile(bb, scope.induction_var, 8, n, n), scope.carried[0]);
    result = b.end_for({next})[0];
  }
  const ValueId out = b.binary(
      OpKind::Add, b.binary(OpKind::Mul, b.expand_dims(b.arange(0, m), 1), b.constant_int(n)),
      b.expand_dims(b.arange(0, n), 0));
  b.store(b.ptr_add(c, out), result);
  return kernel;
}

lower::ThreadPlan plan_for(const ir::Kernel& tile, bool fragments) {
  lower::ThreadPlan plan = lower::plan_threads(tile, test_target());
  plan.dot_matrix_fragments = fragments;
  return plan;
}

TEST(LowerDot, GenericLoweringMatchesAPlainProduct) {
  for (const auto& [m, n, k] :
       {std::tuple{16, 16, 16}, std::tuple{8, 32, 16}, std::tuple{32, 8, 8}}) {
    SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k));
    ir::Kernel tile = product(m, n, k, false);
    const ir::Kernel metal = lower_with_plan(tile, plan_for(tile, false)).metal;
    EXPECT_EQ(count_ops(metal, OpKind::MatrixMma), 0);
    std::vector<float> a, bv;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) a.push_back(element(i, p, 1));
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) bv.push_back(element(p, j, 2));
    std::vector<Buffer> buffers = {Buffer::f32(a), Buffer::f32(bv),
                                   Buffer::zeros(DType::f32, m * n)};
    run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::buf(2)}, {1, 1, 1});
    const std::vector<float> got = buffers[2].floats();
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float want = 1.0f;
        for (int64_t p = 0; p < k; ++p) want += a[i * k + p] * bv[p * n + j];
        ASSERT_EQ(got[i * n + j], want) << i << ", " << j;
      }
  }
}

TEST(LowerDot, FragmentsWhereTheSimdGroupsTileTheOutput) {
  ir::Kernel tile = product(16, 16, 16, false);  // 64 threads: two SIMD groups, a 1 x 2 grid
  const ir::Kernel metal = lower_with_plan(tile, plan_for(tile, true)).metal;
  EXPECT_EQ(count_ops(metal, OpKind::MatrixMma), 4);  // 2 fragments per group x 2 K steps
  EXPECT_EQ(count_ops(metal, OpKind::MatrixStore), 2);
}

TEST(LowerDot, GenericWhenNoSimdGroupGridFits) {
  ir::Kernel tile = product(8, 8, 64, false);  // one 8x8 block for the plan's SIMD groups
  const ir::Kernel metal = lower_with_plan(tile, plan_for(tile, true)).metal;
  EXPECT_EQ(count_ops(metal, OpKind::MatrixMma), 0);
}

TEST(LowerDot, ALoopCarriedAccumulatorStaysInFragments) {
  ir::Kernel tile = product(16, 16, 32, true);
  const ir::Kernel metal = lower_with_plan(tile, plan_for(tile, true)).metal;
  const ir::Op* loop = nullptr;
  ir::walk(metal.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::For) loop = &op;
  });
  ASSERT_NE(loop, nullptr);
  // The loop carries the group's two accumulator fragments, not register slots...
  ASSERT_EQ(loop->results.size(), 2u);
  for (ValueId r : loop->results) EXPECT_TRUE(metal.type(r).is_matrix());
  // ...and stores them to threadgroup memory once, after the loop.
  int stores_in_loop = 0;
  ir::walk(loop->regions[0],
           [&](const ir::Op& op) { stores_in_loop += op.kind == OpKind::MatrixStore; });
  EXPECT_EQ(stores_in_loop, 0);
  EXPECT_EQ(count_ops(metal, OpKind::MatrixStore), 2);
}

}  // namespace
}  // namespace metile::lower_test
