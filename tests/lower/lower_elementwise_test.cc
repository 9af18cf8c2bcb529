#include <gtest/gtest.h>

#include "tests/lower/lowering_harness.h"
#include "tests/lower/test_kernels.h"

namespace metile::lower_test {
namespace {

using ir::OpKind;

std::vector<float> run_vector_add(const ir::Kernel& metal, int64_t block, int n) {
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i) {
    x[i] = 0.5f * i;
    y[i] = 1000.0f - i;
  }
  std::vector<Buffer> buffers = {Buffer::f32(x), Buffer::f32(y), Buffer::zeros(ir::DType::f32, n)};
  const int grid = static_cast<int>((n + block - 1) / block);
  run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::scalar(n)}, {grid, 1, 1});
  std::vector<float> out = buffers[2].floats();
  for (int i = 0; i < n; ++i) EXPECT_EQ(out[i], x[i] + y[i]) << "element " << i << " of " << n;
  return out;
}

TEST(LowerElementwise, VectorAddHasOneScalarPerSlot) {
  lower::LoweringResult r = lower_checked(vector_add(1024));
  const ir::Kernel& m = r.metal;
  EXPECT_FALSE(has_tiles(m));
  EXPECT_EQ(r.plan.threads_per_threadgroup, 256);
  EXPECT_EQ(std::get<int64_t>(m.attrs.at("threads_per_threadgroup")), 256);
  EXPECT_EQ(std::get<int64_t>(m.attrs.at("threadgroup_bytes")), 0);
  // 1024 elements over 256 threads: 4 slots, each loaded twice and stored once, all masked.
  EXPECT_EQ(count_ops(m, OpKind::Load), 8);
  EXPECT_EQ(count_ops(m, OpKind::Store), 4);
  EXPECT_EQ(count_ops(m, OpKind::Barrier), 0);
  EXPECT_EQ(count_ops(m, OpKind::ThreadgroupIndex), 1);
  ir::walk(m.body, [](const ir::Op& op) {
    if (op.kind == OpKind::Load || op.kind == OpKind::Store) {
      EXPECT_EQ(op.operands.size(), 3u);
    }
  });
  ASSERT_EQ(m.params.size(), 4u);
  EXPECT_EQ(m.params[0].name, "x");
  EXPECT_EQ(m.params[2].access, "write");
  EXPECT_EQ(m.type(m.params[3].value), ir::Type::scalar(ir::DType::i32));
  EXPECT_TRUE(r.allocations.empty());
  EXPECT_TRUE(r.loops.empty());
  // A 1-D f32 kernel gets contiguous ownership: thread t owns 4t .. 4t + 3.
  ASSERT_FALSE(r.value_layouts.empty());
  EXPECT_NE(r.value_layouts[0].find("ThreadLayout((8, 9, 0, 1, 2, 3, 4, 5, 6, 7), xor 0, 256 "
                                    "threads, 4 per thread)"),
            std::string::npos)
      << r.value_layouts[0];
  EXPECT_EQ(r.plan.ownership.rfind("contiguous: ", 0), 0u) << r.plan.ownership;
}

TEST(LowerElementwise, VectorAddRaggedSizes) {
  const ir::Kernel metal = lower_checked(vector_add(1024)).metal;
  for (int n : {1, 7, 255, 1000, 1024, 1025, 3000}) run_vector_add(metal, 1024, n);
}

TEST(LowerElementwise, TileSmallerThanThreadCount) {
  // 16 elements on 64 threads: threads 16..63 own nothing and must not touch memory.
  lower::LoweringResult r = lower_checked(vector_add(16), 64);
  EXPECT_EQ(count_ops(r.metal, OpKind::Load), 2);
  EXPECT_NE(r.value_layouts[0].find("threads >= 16 own nothing"), std::string::npos);
  for (int n : {1, 16, 17, 40}) run_vector_add(r.metal, 16, n);
}

TEST(LowerElementwise, PlannedSmallTile) {
  for (int64_t block : {int64_t{16}, int64_t{32}, int64_t{128}, int64_t{4096}}) {
    const ir::Kernel metal = lower_checked(vector_add(block)).metal;
    for (int n : {1, 100, 5000}) run_vector_add(metal, block, n);
  }
}

}  // namespace
}  // namespace metile::lower_test
