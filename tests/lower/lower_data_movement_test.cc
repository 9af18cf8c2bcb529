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

TEST(LowerDataMovement, OuterProductExchangesThroughScratch) {
  // 32 x 32 on 256 threads: neither [32, 1] nor [1, 32] sources are held by the threads
  // that need them, so both broadcasts (of rows and of columns, twice each) exchange.
  lower::LoweringResult r = lower_checked(outer_product(32, 32));
  EXPECT_EQ(r.plan.threads_per_threadgroup, 256);
  EXPECT_GT(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier) % 2, 0);  // publish + release
  bool exchange = false;
  for (const lower::Allocation& a : r.allocations)
    exchange = exchange || a.purpose.find("broadcast exchange") != std::string::npos;
  EXPECT_TRUE(exchange);
  check_outer_product(r.metal, 32, 32);
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
  // Only the [4, 1] row indices move (one exchange: two barriers); the splat is forwarded.
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 2);
  ASSERT_EQ(r.allocations.size(), 1u);
  EXPECT_EQ(r.allocations[0].elements, 4);
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

TEST(LowerDataMovement, PointerTilesDoNotCrossThreads) {
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
