#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tests/lower/lowering_harness.h"
#include "tests/lower/test_kernels.h"

namespace metile::lower_test {
namespace {

using ir::OpKind;

std::vector<float> random_floats(int n, unsigned seed, float lo = -4, float hi = 4) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

void expect_near(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
}

TEST(LowerReduce, RowSumStructure) {
  lower::LoweringResult r = lower_checked(row_sum(1024));
  const ir::Kernel& m = r.metal;
  // 256 threads = 8 SIMD groups: one simd_sum and a publication barrier. The sum is an FP32
  // register reduction at the top level: its private scratch needs no release barrier.
  EXPECT_EQ(count_ops(m, OpKind::SimdSum), 1);
  EXPECT_EQ(count_ops(m, OpKind::Barrier), 1);
  EXPECT_EQ(count_ops(m, OpKind::For), 1);
  ASSERT_EQ(r.allocations.size(), 1u);
  EXPECT_EQ(r.allocations[0].bytes, 8 * 4);
  EXPECT_EQ(r.allocations[0].elements, 8);
  EXPECT_NE(r.allocations[0].purpose.find("reduce.sum private scratch"), std::string::npos);
  ASSERT_EQ(r.register_reductions.size(), 1u);
  EXPECT_EQ(r.register_reductions[0].threads, 256);
  EXPECT_EQ(r.register_reductions[0].registers, 4);
  EXPECT_EQ(r.register_reductions[0].scratch, "private scratch at offset 0, 32 bytes");
  EXPECT_EQ(std::get<int64_t>(m.attrs.at("private_reductions")), 1);
  EXPECT_EQ(std::get<int64_t>(m.attrs.at("threadgroup_bytes")), 32);
  ASSERT_EQ(r.loops.size(), 1u);
  EXPECT_EQ(r.loops[0].tile_elements, 1024);
  EXPECT_EQ(r.loops[0].elements_per_thread, 4);
  // The loop carries the 4 slots of the accumulator tile.
  ir::walk(m.body, [](const ir::Op& op) {
    if (op.kind == OpKind::For) {
      EXPECT_EQ(op.operands.size(), 3u + 4u);
    }
  });
}

TEST(LowerReduce, RowSumMatchesReference) {
  for (int64_t block : {int64_t{64}, int64_t{1024}}) {
    for (int threads : {0, 32, 128}) {
      const ir::Kernel metal = lower_checked(row_sum(block), threads).metal;
      for (int cols : {1, 33, 1000, 2500}) {
        const int rows = 3;
        std::vector<float> x = random_floats(rows * cols, cols);
        std::vector<Buffer> buffers = {Buffer::f32(x), Buffer::zeros(ir::DType::f32, rows)};
        run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::scalar(cols), Arg::scalar(cols)},
                  {rows, 1, 1});
        std::vector<float> want(rows);
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c) want[r] += x[r * cols + c];
        expect_near(buffers[1].floats(), want, 1e-4);
      }
    }
  }
}

TEST(LowerReduce, OneSimdGroupNeedsNoScratch) {
  lower::LoweringResult r = lower_checked(row_sum(256), 32);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 0);
  EXPECT_TRUE(r.allocations.empty());
  EXPECT_EQ(std::get<int64_t>(r.metal.attrs.at("threadgroup_bytes")), 0);
}

TEST(LowerReduce, MaxMinAndIntegers) {
  for (const std::string kind : {"sum", "max", "min"}) {
    const ir::Kernel metal = lower_checked(row_reduce(kind, ir::DType::i32, 512)).metal;
    const int rows = 2, cols = 777;
    std::vector<int32_t> x(rows * cols);
    for (int i = 0; i < rows * cols; ++i) x[i] = (i * 7919) % 2001 - 1000;
    std::vector<Buffer> buffers = {Buffer::i32(x), Buffer::zeros(ir::DType::i32, rows)};
    run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::scalar(cols), Arg::scalar(cols)},
              {rows, 1, 1});
    for (int r = 0; r < rows; ++r) {
      int64_t want = kind == "sum" ? 0 : x[r * cols];
      for (int c = 0; c < cols; ++c) {
        const int64_t v = x[r * cols + c];
        want = kind == "sum" ? want + v : kind == "max" ? std::max(want, v) : std::min(want, v);
      }
      EXPECT_EQ(buffers[1].ints()[r], want) << kind << " row " << r;
    }
  }
}

TEST(LowerReduce, ReduceOfATileSmallerThanTheThreadgroup) {
  // 16 elements on 64 threads (two SIMD groups): idle threads contribute the identity.
  for (const std::string kind : {"sum", "max", "min"}) {
    const ir::Kernel metal = lower_checked(row_reduce(kind, ir::DType::f32, 16), 64).metal;
    const int cols = 50;
    std::vector<float> x = random_floats(cols, 7, 1, 5);  // all positive: 0 is not the answer
    if (kind == "max")
      for (float& v : x) v = -v;
    std::vector<Buffer> buffers = {Buffer::f32(x), Buffer::zeros(ir::DType::f32, 1)};
    run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::scalar(cols), Arg::scalar(cols)},
              {1, 1, 1});
    double want = kind == "sum" ? 0 : x[0];
    for (float v : x)
      want = kind == "sum"   ? want + v
             : kind == "max" ? std::max<double>(want, v)
                             : std::min<double>(want, v);
    EXPECT_NEAR(buffers[1].floats()[0], want, 1e-4) << kind;
  }
}

// Idle threads hold values that are not the identity (arange continues past the tile, a
// splat fills every slot): the reduction must ignore them.
TEST(LowerReduce, IdleThreadSlotsAreIgnored) {
  ir::Kernel k;
  k.name = "idle";
  ir::TileBuilder b(k);
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::i32), "write");
  ir::ValueId a = b.binary(OpKind::Add, b.arange(0, 16), b.constant_int(1));
  ir::ValueId splat = b.full({16}, 3, ir::DType::i32);
  const std::vector<ir::ValueId> results = {
      b.reduce("sum", a), b.reduce("max", a),
      b.reduce("min", b.binary(OpKind::Sub, b.constant_int(0), a)), b.reduce("sum", splat)};
  for (size_t i = 0; i < results.size(); ++i)
    b.store(b.ptr_add(out, b.constant_int(static_cast<int64_t>(i))), results[i]);
  for (int threads : {32, 64, 256}) {
    const ir::Kernel metal = lower_checked(k, threads).metal;
    std::vector<Buffer> buffers = {Buffer::zeros(ir::DType::i32, 4)};
    run_metal(metal, buffers, {Arg::buf(0)}, {1, 1, 1});
    EXPECT_EQ(buffers[0].ints(), (std::vector<int64_t>{136, 16, -16, 48})) << threads << " threads";
  }
}

TEST(LowerReduce, SoftmaxThreePasses) {
  lower::LoweringResult r = lower_checked(softmax(256));
  EXPECT_EQ(r.loops.size(), 3u);
  EXPECT_EQ(count_ops(r.metal, OpKind::SimdMax), 1);
  EXPECT_EQ(count_ops(r.metal, OpKind::SimdSum), 1);
  // The max reduction's shared scratch (released by a barrier) follows the FP32 sum's private
  // scratch; three barriers: the max's publication and release, the sum's publication.
  ASSERT_EQ(r.allocations.size(), 2u);
  EXPECT_NE(r.allocations[0].purpose.find("reduce.max scratch"), std::string::npos);
  EXPECT_EQ(r.allocations[0].offset, 16);
  EXPECT_NE(r.allocations[1].purpose.find("reduce.sum private scratch"), std::string::npos);
  EXPECT_EQ(r.allocations[1].offset, 0);
  EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 3);
  for (int cols : {1, 100, 256, 1000}) {
    const int rows = 4;
    std::vector<float> x = random_floats(rows * cols, 11 + cols, -10, 10);
    std::vector<Buffer> buffers = {Buffer::f32(x), Buffer::zeros(ir::DType::f32, rows * cols)};
    run_metal(r.metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::scalar(cols), Arg::scalar(cols)},
              {rows, 1, 1});
    expect_near(buffers[1].floats(), softmax_reference(x, rows, cols), 1e-5);
  }
}

TEST(LowerReduce, SequentialRegisterReductionsGetSeparateScratch) {
  // Two top-level FP32 sums of one loaded tile: each has its own private region, and neither
  // waits for a release barrier; the second reads its own partials, not the first's.
  ir::Kernel k;
  k.name = "two_sums";
  ir::TileBuilder b(k);
  ir::ValueId x = b.add_param("x", ir::Type::ptr(ir::DType::f32), "read");
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::f32), "write");
  ir::ValueId v = b.load(b.ptr_add(x, b.arange(0, 1024)));
  ir::ValueId total = b.reduce("sum", v);
  ir::ValueId squares = b.reduce("sum", b.binary(OpKind::Mul, v, v));
  b.store(out, total);
  b.store(b.ptr_add(out, b.constant_int(1)), squares);
  for (int threads : {0, 64, 1024}) {
    const lower::LoweringResult r = lower_checked(k, threads);
    const int64_t groups = r.plan.threads_per_threadgroup / 32;
    ASSERT_EQ(r.register_reductions.size(), 2u);
    EXPECT_EQ(count_ops(r.metal, OpKind::Barrier), 2);
    ASSERT_EQ(r.allocations.size(), 2u);
    EXPECT_EQ(r.allocations[1].offset - r.allocations[0].offset, (groups * 4 + 15) / 16 * 16);
    std::vector<float> xs = random_floats(1024, 9, -2, 2);
    std::vector<Buffer> buffers = {Buffer::f32(xs), Buffer::zeros(ir::DType::f32, 2)};
    run_metal(r.metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
    double want_total = 0, want_squares = 0;
    for (float e : xs) {
      want_total += e;
      want_squares += double(e) * e;
    }
    EXPECT_NEAR(buffers[1].floats()[0], want_total, 1e-3);
    EXPECT_NEAR(buffers[1].floats()[1], want_squares, 1e-3);
  }
}

TEST(LowerReduce, RegisterReductionsTakeTwoSlotsInTurn) {
  // Five top-level FP32 sums: the third reuses the first's slot, the publication barrier of the
  // second lying between the first's reads and the third's writes (verify_scratch checks it), so
  // the kernel needs two slots however many sums it has.
  ir::Kernel k;
  k.name = "five_sums";
  ir::TileBuilder b(k);
  ir::ValueId x = b.add_param("x", ir::Type::ptr(ir::DType::f32), "read");
  ir::ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::f32), "write");
  ir::ValueId v = b.load(b.ptr_add(x, b.arange(0, 1024)));
  for (int i = 0; i < 5; ++i) {
    // Each sum depends on the one before: v minus its mean.
    v = b.binary(OpKind::Sub, v,
                 b.binary(OpKind::Mul, b.reduce("sum", v), b.constant(1.0 / 1024, ir::DType::f32)));
    b.store(b.ptr_add(out, b.constant_int(i)), b.reduce("sum", b.binary(OpKind::Mul, v, v)));
  }
  for (int threads : {64, 1024}) {
    const lower::LoweringResult r = lower_checked(k, threads);
    const int64_t slot = (r.plan.threads_per_threadgroup / 32 * 4 + 15) / 16 * 16;
    ASSERT_EQ(r.allocations.size(), 10u);
    for (size_t i = 0; i < r.allocations.size(); ++i)
      EXPECT_EQ(r.allocations[i].offset, i % 2 ? slot : 0) << i;
    EXPECT_EQ(std::get<int64_t>(r.metal.attrs.at("threadgroup_bytes")), 2 * slot);
    std::vector<float> xs = random_floats(1024, 11, -2, 2);
    std::vector<Buffer> buffers = {Buffer::f32(xs), Buffer::zeros(ir::DType::f32, 5)};
    run_metal(r.metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
    std::vector<double> values(xs.begin(), xs.end());
    for (int i = 0; i < 5; ++i) {
      double total = 0, squares = 0;
      for (double e : values) total += e;
      for (double& e : values) {
        e -= total / 1024;
        squares += e * e;
      }
      EXPECT_NEAR(buffers[1].floats()[i], squares, 1e-4 * squares) << i;
    }
  }
}

TEST(LowerReduce, RmsNormWithF32Accumulation) {
  const ir::Kernel metal = lower_checked(rms_norm(512)).metal;
  for (int cols : {5, 512, 1500}) {
    const int rows = 3;
    const float eps = 1e-5f;
    std::vector<float> x = random_floats(rows * cols, 3 + cols), w = random_floats(cols, 5);
    std::vector<Buffer> buffers = {Buffer::f32(x), Buffer::f32(w),
                                   Buffer::zeros(ir::DType::f32, rows * cols)};
    run_metal(metal, buffers,
              {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::scalar(cols), Arg::scalar(cols),
               Arg::scalar(eps)},
              {rows, 1, 1});
    expect_near(buffers[2].floats(), rms_norm_reference(x, w, rows, cols, eps), 1e-5);
  }
}

}  // namespace
}  // namespace metile::lower_test
