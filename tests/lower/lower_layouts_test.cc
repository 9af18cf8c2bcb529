// Lowering under layouts other than the striped identity: the planner's contiguous choice and
// plans that give arbitrary ThreadLayouts (bit swaps inside and across SIMD groups, XOR masks,
// 1 to 32 registers per thread). Each test checks which logical element every (thread, slot)
// addresses, and runs the kernel in the interpreter against a C++ reference.
#include <gtest/gtest.h>

#include <map>

#include "metile/ir/scalar_eval.h"
#include "metile/lower/plan_ownership.h"
#include "tests/lower/lowering_harness.h"
#include "tests/lower/test_kernels.h"

namespace metile::lower_test {
namespace {

using ir::OpKind;
using ir::ThreadLayout;

// The element offsets of the kernel's top-level stores through parameter `param`, in program
// order, as thread `thread` of threadgroup 0 computes them (scalar parameters are 0).
std::vector<int64_t> store_offsets(const ir::Kernel& metal, const std::string& param,
                                   int64_t thread) {
  std::map<ir::ValueId, int64_t> value;
  std::map<ir::ValueId, bool> from_param;
  for (const ir::Param& p : metal.params) {
    value[p.value] = 0;
    from_param[p.value] = p.name == param;
  }
  std::vector<int64_t> offsets;
  for (const ir::Op& op : metal.body.ops) {
    if (op.kind == OpKind::Store) {
      if (from_param[op.operands[0]]) offsets.push_back(value[op.operands[0]]);
      continue;
    }
    if (op.results.size() != 1) continue;
    const ir::ValueId r = op.results[0];
    if (op.kind == OpKind::ThreadIndex) {
      value[r] = thread;
    } else if (op.kind == OpKind::ThreadgroupIndex) {
      value[r] = 0;
    } else if (op.kind == OpKind::PtrAdd) {
      value[r] = value[op.operands[0]] + value[op.operands[1]];
      from_param[r] = from_param[op.operands[0]];
    } else if (ir::is_integer(metal.type(r).dtype) && ir::scalar_op(op.kind)) {
      std::vector<ir::Scalar> operands;
      for (ir::ValueId v : op.operands)
        operands.push_back(ir::Scalar::of(metal.type(v).dtype, value[v]));
      const ir::Evaluation e = ir::evaluate(op.kind, op.attrs, operands, metal.type(r).dtype);
      if (e.has_value()) value[r] = e.value.i;
    }
  }
  return offsets;
}

// Every thread's slot r stores to layout.logical_index(thread, r).
void expect_owned_by(const ir::Kernel& metal, const ThreadLayout& layout) {
  for (int64_t t = 0; t < layout.thread_count(); ++t) {
    const std::vector<int64_t> offsets = store_offsets(metal, "out", t);
    ASSERT_EQ(static_cast<int64_t>(offsets.size()), layout.elements_per_thread());
    for (int64_t r = 0; r < layout.elements_per_thread(); ++r)
      ASSERT_EQ(offsets[r], layout.logical_index(t, r))
          << layout.str() << " thread " << t << " slot " << r;
  }
}

lower::ThreadPlan plan_with(const ThreadLayout& layout) {
  lower::ThreadPlan plan(static_cast<int>(layout.thread_count()), "forced by the test");
  plan.layouts = {layout};
  return plan;
}

// Bit orders of 1024-element layouts: identities with 1..32 registers, bit swaps inside a
// SIMD group and across groups, register bits moved low, XOR masks.
std::vector<ThreadLayout> layout_families() {
  std::vector<ThreadLayout> layouts;
  for (int64_t per_thread : {1, 2, 4, 8, 16, 32})
    layouts.push_back(ThreadLayout::identity(1024, per_thread));
  layouts.push_back(ThreadLayout({1, 0, 2, 3, 4, 5, 6, 7, 8, 9}));             // inside a group
  layouts.push_back(ThreadLayout({0, 1, 2, 3, 9, 5, 6, 7, 8, 4}));             // across groups
  layouts.push_back(ThreadLayout({8, 9, 0, 1, 2, 3, 4, 5, 6, 7}, 0, 4));       // contiguous
  layouts.push_back(ThreadLayout({9, 1, 0, 3, 2, 5, 4, 7, 6, 8}, 0, 4));       // mixed
  layouts.push_back(ThreadLayout({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0x2a5));      // XOR only
  layouts.push_back(ThreadLayout({5, 6, 7, 8, 9, 0, 1, 2, 3, 4}, 0x3f0, 32));  // one SIMD group
  return layouts;
}

TEST(LowerLayouts, EverySlotAddressesItsLogicalElement) {
  for (const ThreadLayout& layout : layout_families()) {
    SCOPED_TRACE(layout.str());
    const lower::LoweringResult r = lower_with_plan(vector_add(1024), plan_with(layout));
    expect_owned_by(r.metal, layout);
    EXPECT_NE(r.value_layouts[0].find(layout.str()), std::string::npos) << r.value_layouts[0];
  }
}

TEST(LowerLayouts, VectorAddMatchesTheReferenceInEveryLayout) {
  for (const ThreadLayout& layout : layout_families()) {
    SCOPED_TRACE(layout.str());
    const ir::Kernel metal = lower_with_plan(vector_add(1024), plan_with(layout)).metal;
    for (int n : {1, 1000, 1024, 2500}) {
      std::vector<float> x(n), y(n);
      for (int i = 0; i < n; ++i) {
        x[i] = 0.25f * i;
        y[i] = 3.0f - i;
      }
      std::vector<Buffer> buffers = {Buffer::f32(x), Buffer::f32(y),
                                     Buffer::zeros(ir::DType::f32, n)};
      run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::buf(2), Arg::scalar(n)},
                {(n + 1023) / 1024, 1, 1});
      const std::vector<float> out = buffers[2].floats();
      for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], x[i] + y[i]) << "element " << i;
    }
  }
}

TEST(LowerLayouts, ReductionsAndBroadcastsInEveryLayout) {
  // Row sums reduce in any ownership; the outer product forwards or exchanges its broadcasts
  // between the layouts of its [32, 32] result and its [32, 1] / [1, 32] operands.
  for (const ThreadLayout& layout : layout_families()) {
    SCOPED_TRACE(layout.str());
    const ir::Kernel metal = lower_with_plan(row_sum(1024), plan_with(layout)).metal;
    const int cols = 1500;
    std::vector<float> x(2 * cols);
    for (int i = 0; i < 2 * cols; ++i) x[i] = static_cast<float>((i * 37) % 11) - 5;
    std::vector<Buffer> buffers = {Buffer::f32(x), Buffer::zeros(ir::DType::f32, 2)};
    run_metal(metal, buffers, {Arg::buf(0), Arg::buf(1), Arg::scalar(cols), Arg::scalar(cols)},
              {2, 1, 1});
    for (int row = 0; row < 2; ++row) {
      float want = 0;
      for (int c = 0; c < cols; ++c) want += x[row * cols + c];
      EXPECT_EQ(buffers[1].floats()[row], want) << "row " << row;
    }

    const ir::Kernel outer = lower_with_plan(outer_product(32, 32), plan_with(layout)).metal;
    std::vector<Buffer> out = {Buffer::zeros(ir::DType::i32, 1024)};
    run_metal(outer, out, {Arg::buf(0)}, {1, 1, 1});
    const std::vector<int64_t> got = out[0].ints();
    for (int i = 0; i < 32; ++i)
      for (int j = 0; j < 32; ++j) ASSERT_EQ(got[i * 32 + j], (i + 1) * (j + 2)) << i << "," << j;
  }
}

TEST(LowerLayouts, NonIdentityLayoutsMaskTheThreadIndex) {
  const ThreadLayout contiguous = lower::contiguous_layout(1024, 256, 4);
  const lower::LoweringResult r = lower_with_plan(vector_add(1024), plan_with(contiguous));
  bool masked = false;
  ir::walk(r.metal.body, [&](const ir::Op& op) {
    if (op.kind == OpKind::And && r.metal.type(op.results[0]).dtype == ir::DType::i32)
      masked = true;
  });
  EXPECT_TRUE(masked);
  // The striped identity keeps the plain thread index.
  const lower::LoweringResult striped =
      lower_with_plan(vector_add(1024), lower::ThreadPlan(256, "striped"));
  EXPECT_EQ(count_ops(striped.metal, OpKind::And), 0);
}

TEST(LowerLayouts, PlanLayoutsMustCoverThePlansThreads) {
  lower::ThreadPlan plan(128, "test");
  plan.layouts = {ThreadLayout::identity(1024, 4)};
  try {
    lower_with_plan(vector_add(1024), plan);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("covers 256 threads, but the plan has 128"),
              std::string::npos)
        << e.what();
  }
}

TEST(PlanOwnership, OneDimensionalMemoryKernelsGetContiguousOwnership) {
  for (ir::Kernel k : {vector_add(1024), rms_norm(1024), softmax(1024), row_sum(1024)}) {
    const lower::ThreadPlan plan = lower::plan_threads(k, test_target());
    SCOPED_TRACE(k.name);
    EXPECT_EQ(plan.ownership.rfind("contiguous: ", 0), 0u) << plan.ownership;
    ASSERT_EQ(plan.layouts.size(), 1u);
    EXPECT_EQ(plan.layouts[0], lower::contiguous_layout(1024, 256, 4));
  }
}

TEST(PlanOwnership, StripedWhereContiguousWouldNotHelpOrNeedsAnExchange) {
  const auto ownership = [](const ir::Kernel& k) {
    return lower::plan_threads(k, test_target()).ownership;
  };
  EXPECT_EQ(ownership(outer_product(32, 32)),
            "striped: a 2-D tile (tile<32x1xi32>) is not a 1-D access pattern");
  EXPECT_EQ(ownership(row_reduce("sum", ir::DType::i32, 1024)),
            "striped: no f16/bf16/f32 tile load or store gives each thread 4 elements to group");
  ir::Kernel k = vector_add(1024);
  k.attrs["vector_width"] = int64_t{1};
  EXPECT_EQ(ownership(k), "striped: the kernel sets vector_width = 1");
  // Two elements per thread are too few to group.
  EXPECT_EQ(ownership(vector_add(64)).rfind("striped: no f16/bf16/f32", 0), 0u);
}

}  // namespace
}  // namespace metile::lower_test
