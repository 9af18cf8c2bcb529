#include <gtest/gtest.h>

#include "tests/lower/lowering_harness.h"
#include "tests/lower/test_kernels.h"

namespace metile::lower_test {
namespace {

using ir::OpKind;

void check_outer_product(const ir::Kernel& metal, int64_t m, int64_t n) {
  std::vector<Buffer> buffers = {Buffer::zeros(ir::DType::i32, m * n)};
  run_metal(metal, buffers, {Arg::buf(0)}, {1, 1, 1});
  std::vector<int64_t> out = buffers[0].ints();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(out[i * n + j], (i + 1) * (j + 2)) << "(" << i << ", " << j << ")";
}

bool has_broadcast_exchange(const lower::LoweringResult& r) {
  for (const lower::Allocation& a : r.allocations)
    if (a.purpose.find("broadcast exchange") != std::string::npos) return true;
  return false;
}

TEST(LowerDataMovement, BroadcastIndicesAreRecomputedNotExchanged) {
  // 32 x 32 on 256 threads: neither [32, 1] nor [1, 32] sources are held by the threads that
  // need them, but both are index computations (arange plus a constant), so each thread
  // recomputes its elements: no scratch, no barrier.
  lower::LoweringResult r = lower_checked(outer_product(32, 32));
  EXPECT_EQ(r.plan.threads_per_threadgroup, 256);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_FALSE(has_broadcast_exchange(r));
  check_outer_product(r.metal, 32, 32);
}

// out[i, j] = x[i] * y[j] for loaded x [m] and y [n]: loaded values cannot be recomputed.
ir::Kernel loaded_outer_product(int64_t m, int64_t n) {
  ir::Kernel k;
  k.name = "loaded_outer_product";
  ir::TileBuilder b(k);
  ir::ValueId x = b.add_param("x", ir::Type::ptr(ir::DType::i32), "read");
  ir::ValueId y = b.add_param("y", ir::Type::ptr(ir::DType::i32), "read");
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
  ir::ValueId rows = b.expand_dims(b.load(b.ptr_add(x, b.arange(0, m))), 1);
  ir::ValueId cols = b.expand_dims(b.load(b.ptr_add(y, b.arange(0, n))), 0);
  ir::ValueId index = b.binary(
      OpKind::Add, b.binary(OpKind::Mul, b.expand_dims(b.arange(0, m), 1), b.constant_int(n)),
      b.expand_dims(b.arange(0, n), 0));
  b.store(b.ptr_add(out, index), b.binary(OpKind::Mul, rows, cols));
  return k;
}

TEST(LowerDataMovement, BroadcastOfLoadedValuesExchangesThroughScratch) {
  lower::LoweringResult r = lower_checked(loaded_outer_product(32, 32), 256);
  EXPECT_GT(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier) % 2, 0);  // publish + release
  EXPECT_TRUE(has_broadcast_exchange(r));
  std::vector<int32_t> x(32), y(32);
  for (int i = 0; i < 32; ++i) x[i] = i + 1, y[i] = 3 * i - 7;
  std::vector<Buffer> buffers = {Buffer::i32(x), Buffer::i32(y),
                                 Buffer::zeros(ir::DType::i32, 1024)};
  run_metal(r.metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::buf(2)}, {1, 1, 1});
  const std::vector<int64_t> got = buffers[2].ints();
  for (int i = 0; i < 32; ++i)
    for (int j = 0; j < 32; ++j) ASSERT_EQ(got[i * 32 + j], x[i] * y[j]) << i << ", " << j;
}

TEST(LowerDataMovement, RowBroadcastWiderThanTheThreadgroupIsForwarded) {
  // [1, 512] -> [4, 512] on 128 threads: every destination slot's source lives in the same
  // thread, so no barrier and no scratch are needed for it.
  ir::Kernel k;
  k.name = "row_broadcast";
  ir::TileBuilder b(k);
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
  ir::ValueId cols = b.expand_dims(b.arange(0, 512), 0);
  ir::ValueId wide = b.broadcast_to(cols, {4, 512});
  ir::ValueId rows = b.broadcast_to(b.expand_dims(b.arange(0, 4), 1), {4, 512});
  ir::ValueId splat_row =
      b.broadcast_to(b.expand_dims(b.splat(b.constant_int(5), {4}), 1), {4, 512});
  ir::ValueId index = b.binary(OpKind::Add, b.binary(OpKind::Mul, rows, b.constant_int(512)), wide);
  b.store(b.ptr_add(out, index), b.binary(OpKind::Add, wide, splat_row));
  lower::LoweringResult r = lower_checked(k, 128);
  // The splat is forwarded and the [4, 1] row indices are recomputed: nothing moves.
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_TRUE(r.allocations.empty());
  std::vector<Buffer> buffers = {Buffer::zeros(ir::DType::i32, 4 * 512)};
  run_metal(r.metal, buffers, {Arg::buf(0)}, {1, 1, 1});
  std::vector<int64_t> got = buffers[0].ints();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 512; ++j) ASSERT_EQ(got[i * 512 + j], j + 5);
}

TEST(LowerDataMovement, VariousShapesAndThreadCounts) {
  for (auto [m, n] :
       std::vector<std::pair<int64_t, int64_t>>{{1, 8}, {8, 1}, {4, 64}, {64, 4}, {16, 128}})
    for (int threads : {32, 64, 256}) {
      SCOPED_TRACE(std::to_string(m) + "x" + std::to_string(n) + " on " + std::to_string(threads));
      check_outer_product(lower_checked(outer_product(m, n), threads).metal, m, n);
    }
}

TEST(LowerDataMovement, ExpandDimsNeverMovesValues) {
  ir::Kernel k;
  k.name = "expand";
  ir::TileBuilder b(k);
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
  ir::ValueId a = b.arange(0, 256);
  ir::ValueId e = b.expand_dims(a, 0);
  b.store(b.ptr_add(out, e), b.binary(OpKind::Mul, e, b.constant_int(3)));
  lower::LoweringResult r = lower_checked(k, 64);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  std::vector<Buffer> buffers = {Buffer::zeros(ir::DType::i32, 256)};
  run_metal(r.metal, buffers, {Arg::buf(0)}, {1, 1, 1});
  for (int i = 0; i < 256; ++i) EXPECT_EQ(buffers[0].ints()[i], 3 * i);
}

TEST(LowerDataMovement, BroadcastsInsideOneSimdGroupShuffle) {
  // On 32 threads every source element of the outer product's broadcasts lies in the one SIMD
  // group: each moved slot is one simd_shuffle, with no scratch and no barrier.
  lower::LoweringResult r = lower_checked(outer_product(16, 32), 32);
  EXPECT_GT(count_ops(r.metal, OpKind::SimdShuffle), 0);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_TRUE(r.allocations.empty());
  check_outer_product(r.metal, 16, 32);
}

// x + rows * 64 broadcast over 64 columns: pointer tiles never cross threads; where an index
// computation defines them, each thread recomputes its own.
TEST(LowerDataMovement, PointerTilesAreRecomputedNotMoved) {
  ir::Kernel k;
  k.name = "pointer_rows";
  ir::TileBuilder b(k);
  ir::ValueId x = b.add_param("x", ir::Type::ptr(ir::DType::f32), "read");
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::f32), "write");
  ir::ValueId rows = b.expand_dims(b.binary(OpKind::Mul, b.arange(0, 4), b.constant_int(64)), 1);
  ir::ValueId row_ptrs = b.ptr_add(x, rows);  // tile<4x1xptr<f32>>
  ir::ValueId cols = b.expand_dims(b.arange(0, 64), 0);
  ir::ValueId ptrs = b.ptr_add(row_ptrs, cols);  // broadcasts the pointers to [4, 64]
  b.store(b.ptr_add(out, b.binary(OpKind::Add, rows, cols)), b.load(ptrs));
  lower::LoweringResult r = lower_checked(k, 64);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  std::vector<float> in(256);
  for (int i = 0; i < 256; ++i) in[i] = 0.5f * static_cast<float>(i) - 3.0f;
  std::vector<Buffer> buffers = {Buffer::f32(in), Buffer::zeros(ir::DType::f32, 256)};
  run_metal(r.metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
  EXPECT_EQ(buffers[1].floats(), in);
}

TEST(LowerDataMovement, LoadedPointerTilesDoNotCrossThreads) {
  ir::Kernel k;
  k.name = "loaded_pointer_rows";
  ir::TileBuilder b(k);
  ir::ValueId x = b.add_param("x", ir::Type::ptr(ir::DType::f32), "read");
  ir::ValueId starts = b.add_param("starts", ir::Type::ptr(ir::DType::i32), "read");
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::f32), "write");
  ir::ValueId rows = b.expand_dims(b.load(b.ptr_add(starts, b.arange(0, 4))), 1);
  ir::ValueId row_ptrs = b.ptr_add(x, rows);  // from loaded offsets: not recomputable
  ir::ValueId cols = b.expand_dims(b.arange(0, 64), 0);
  ir::ValueId index =
      b.binary(OpKind::Add,
               b.expand_dims(b.binary(OpKind::Mul, b.arange(0, 4), b.constant_int(64)), 1), cols);
  b.store(b.ptr_add(out, index), b.load(b.ptr_add(row_ptrs, cols)));
  try {
    lower_checked(k, 64);
    FAIL() << "expected NotSupported";
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("broadcast: moving a tile of pointers"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace metile::lower_test
