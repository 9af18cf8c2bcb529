// reduce_axis, trans and reshape lowered and run in the Metal IR interpreter against plain
// C++ references, over shapes held by one SIMD group, several, and fewer elements than threads.
#include <gtest/gtest.h>

#include <algorithm>

#include "metile/ir/builder.h"
#include "tests/lower/lowering_harness.h"

namespace metile::lower_test {
namespace {

using ir::OpKind;
using ir::TileBuilder;
using ir::ValueId;

int64_t element(int64_t i, int64_t j) {
  return (i * 7 + j * 3) % 11 - 5;
}

// The [m, n] i32 tile loaded from the kernel's first buffer, and that buffer's contents:
// element(i, j) in row-major order. Loading a 1-D tile and reshaping it moves nothing, so the
// tests see only the moves of the op under test.
ValueId load_grid(TileBuilder& b, int64_t m, int64_t n) {
  const ValueId in = b.add_param("in", ir::Type::ptr(ir::DType::i32), "read");
  return b.reshape(b.load(b.ptr_add(in, b.arange(0, m * n))), {m, n});
}

Buffer grid_buffer(int64_t m, int64_t n) {
  std::vector<int32_t> values;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) values.push_back(static_cast<int32_t>(element(i, j)));
  return Buffer::i32(values);
}

ir::Kernel reduce_along(const std::string& kind, int64_t m, int64_t n, int64_t axis) {
  ir::Kernel k;
  k.name = "reduce_along";
  TileBuilder b(k);
  const ValueId x = load_grid(b, m, n);
  const ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
  const ValueId reduced = b.reduce_axis(kind, x, axis);
  b.store(b.ptr_add(out, b.arange(0, axis == 0 ? n : m)), reduced);
  return k;
}

std::vector<int64_t> reference(const std::string& kind, int64_t m, int64_t n, int64_t axis) {
  std::vector<int64_t> want;
  for (int64_t o = 0; o < (axis == 0 ? n : m); ++o) {
    int64_t acc = kind == "sum" ? 0 : kind == "max" ? -1000 : 1000;
    for (int64_t k = 0; k < (axis == 0 ? m : n); ++k) {
      const int64_t v = axis == 0 ? element(k, o) : element(o, k);
      acc = kind == "sum" ? acc + v : kind == "max" ? std::max(acc, v) : std::min(acc, v);
    }
    want.push_back(acc);
  }
  return want;
}

TEST(LowerAxis, ReductionsMatchReference) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{4, 32}, {32, 4},  {32, 32}, {64, 64},
                                                           {2, 8},  {8, 128}, {1, 16},  {16, 1}};
  for (const auto& [m, n] : shapes)
    for (int64_t axis : {0, 1})
      for (const std::string kind : {"sum", "max", "min"})
        for (int threads : {0, 32, 128}) {
          SCOPED_TRACE(kind + " axis " + std::to_string(axis) + " of [" + std::to_string(m) + ", " +
                       std::to_string(n) + "], threads " + std::to_string(threads));
          const ir::Kernel metal = lower_checked(reduce_along(kind, m, n, axis), threads).metal;
          const std::vector<int64_t> want = reference(kind, m, n, axis);
          std::vector<Buffer> buffers = {
              grid_buffer(m, n), Buffer::zeros(ir::DType::i32, static_cast<int64_t>(want.size()))};
          run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
          ASSERT_EQ(buffers[1].ints(), want);
        }
}

TEST(LowerAxis, ReductionInsideOneSimdGroupUsesShufflesNotMemory) {
  // [4, 32] over axis 1 on 32 threads: the columns are the lanes, so a butterfly of five
  // simd_shuffle_xor per row combines them, and each thread selects its row's sum.
  lower::LoweringResult r = lower_checked(reduce_along("sum", 4, 32, 1), 32);
  EXPECT_EQ(count_ops(r.metal, OpKind::SimdShuffleXor), 5 * 4);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_TRUE(r.allocations.empty());
  // [32, 4] over axis 0: slots and lane bits 2..4 hold the rows; each thread keeps its column.
  r = lower_checked(reduce_along("max", 32, 4, 0), 32);
  EXPECT_EQ(count_ops(r.metal, OpKind::SimdShuffleXor), 3);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_TRUE(r.allocations.empty());
}

TEST(LowerAxis, ScanInsideOneSimdGroupUsesShufflesAcrossGroupsScratch) {
  // A 1-D [32] cumsum on 32 threads: one logical bit per lane bit, five simd_shuffle_xor, no
  // memory; on 64 threads the sixth bit is the SIMD group bit, exchanged through scratch.
  const auto scan_kernel = [](int64_t n) {
    ir::Kernel k;
    k.name = "scan";
    TileBuilder b(k);
    const ValueId in = b.add_param("in", ir::Type::ptr(ir::DType::i32), "read");
    const ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
    const ValueId offs = b.arange(0, n);
    b.store(b.ptr_add(out, offs), b.scan("sum", b.load(b.ptr_add(in, offs)), 0, false));
    return k;
  };
  lower::LoweringResult r = lower_checked(scan_kernel(32), 32);
  EXPECT_EQ(count_ops(r.metal, OpKind::SimdShuffleXor), 5);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_TRUE(r.allocations.empty());
  r = lower_checked(scan_kernel(64), 64);
  EXPECT_EQ(count_ops(r.metal, OpKind::SimdShuffleXor), 5);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 2);
  ASSERT_EQ(r.allocations.size(), 1u);
  EXPECT_NE(r.allocations[0].purpose.find("scan.sum bit 5 scratch"), std::string::npos);
}

// xor_permute of the [m, n] grid: element i takes element i ^ mask, whichever of register
// slots, SIMD lanes and SIMD groups the mask's bits fall on (several at once included).
TEST(LowerAxis, XorPermuteMatchesReferenceOnSlotsLanesAndGroups) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{4, 32}, {32, 32}, {2, 8}, {64, 64}};
  for (const auto& [m, n] : shapes)
    for (int64_t mask : {int64_t{1}, int64_t{6}, n, m * n / 2, m * n - 1})
      for (int threads : {0, 32, 128}) {
        if (mask <= 0 || mask >= m * n) continue;
        SCOPED_TRACE("mask " + std::to_string(mask) + " of [" + std::to_string(m) + ", " +
                     std::to_string(n) + "], threads " + std::to_string(threads));
        ir::Kernel k;
        k.name = "xor_permute";
        TileBuilder b(k);
        const ValueId x = load_grid(b, m, n);
        const ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
        b.store(b.ptr_add(out, b.reshape(b.arange(0, m * n), {m, n})), b.xor_permute(x, mask));
        const ir::Kernel metal = lower_checked(std::move(k), threads).metal;
        std::vector<Buffer> buffers = {grid_buffer(m, n), Buffer::zeros(ir::DType::i32, m * n)};
        run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
        std::vector<int64_t> want;
        for (int64_t i = 0; i < m * n; ++i) want.push_back(element((i ^ mask) / n, (i ^ mask) % n));
        ASSERT_EQ(buffers[1].ints(), want);
      }
}

TEST(LowerAxis, XorPermuteOfLaneBitsIsOneShufflePerSlot) {
  // [4, 32] on 32 threads: the columns are the lanes, so mask 5 is one shuffle per slot (4),
  // mask 32 renames slots, and nothing goes through memory.
  for (int64_t mask : {int64_t{5}, int64_t{32}}) {
    ir::Kernel k;
    k.name = "xor_permute";
    TileBuilder b(k);
    const ValueId x = load_grid(b, 4, 32);
    const ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
    b.store(b.ptr_add(out, b.reshape(b.arange(0, 128), {4, 32})), b.xor_permute(x, mask));
    lower::LoweringResult r = lower_checked(std::move(k), 32);
    EXPECT_EQ(count_ops(r.metal, OpKind::SimdShuffleXor), mask == 5 ? 4 : 0);
    EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
    EXPECT_TRUE(r.allocations.empty());
  }
}

TEST(LowerAxis, ReductionAcrossSimdGroupsPublishesPartials) {
  // [32, 32] over axis 0 on 256 threads: rows span the 8 SIMD groups, whose partials meet in
  // scratch (32 outputs x 8 groups), published and released by two barriers.
  lower::LoweringResult r = lower_checked(reduce_along("sum", 32, 32, 0), 256);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 2);
  ASSERT_EQ(r.allocations.size(), 1u);
  EXPECT_EQ(r.allocations[0].elements, 32 * 8);
  EXPECT_NE(r.allocations[0].purpose.find("reduce_axis.sum scratch"), std::string::npos);
}

ir::Kernel transpose(int64_t m, int64_t n) {
  ir::Kernel k;
  k.name = "transpose";
  TileBuilder b(k);
  const ValueId x = load_grid(b, m, n);
  const ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
  // Destination (i, j) of [n, m] at its row-major index i * m + j.
  b.store(b.ptr_add(out, b.reshape(b.arange(0, m * n), {n, m})), b.trans(x));
  return k;
}

TEST(LowerAxis, TransposeMatchesReference) {
  const std::vector<std::pair<int64_t, int64_t>> shapes = {{4, 8}, {8, 4},   {32, 32},
                                                           {2, 4}, {64, 16}, {1, 32}};
  for (const auto& [m, n] : shapes)
    for (int threads : {0, 32, 256}) {
      SCOPED_TRACE("[" + std::to_string(m) + ", " + std::to_string(n) + "], threads " +
                   std::to_string(threads));
      const ir::Kernel metal = lower_checked(transpose(m, n), threads).metal;
      std::vector<Buffer> buffers = {grid_buffer(m, n), Buffer::zeros(ir::DType::i32, m * n)};
      run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
      std::vector<int64_t> want;
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < m; ++j) want.push_back(element(j, i));
      ASSERT_EQ(buffers[1].ints(), want);
    }
}

TEST(LowerAxis, TransposeInsideOneSimdGroupShuffles) {
  lower::LoweringResult r = lower_checked(transpose(8, 4), 32);
  EXPECT_EQ(count_ops(r.metal, OpKind::SimdShuffle), 1);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_TRUE(r.allocations.empty());
  r = lower_checked(transpose(32, 32), 256);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 2);
}

TEST(LowerAxis, ReshapeMovesNothing) {
  // A [8, 16] tile reshaped from 128 loaded values and back: no exchange, values in order.
  ir::Kernel k;
  k.name = "reshape";
  TileBuilder b(k);
  const ValueId x = load_grid(b, 8, 16);
  const ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
  b.store(b.ptr_add(out, b.arange(0, 128)), b.reshape(x, {128}));
  lower::LoweringResult r = lower_checked(k, 32);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_TRUE(r.allocations.empty());
  std::vector<Buffer> buffers = {grid_buffer(8, 16), Buffer::zeros(ir::DType::i32, 128)};
  run_metal(r.metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
  ASSERT_EQ(buffers[1].ints(), grid_buffer(8, 16).ints());
}

}  // namespace
}  // namespace metile::lower_test
