// plan_axis_slices: an axis reduction's result takes the slice of its source's layout when the
// reduction stays inside SIMD groups, and every thread then holds the statistic of each row
// (column) it holds elements of.
#include "metile/lower/plan_axis_slices.h"

#include <gtest/gtest.h>

#include "metile/ir/builder.h"
#include "metile/lower/lower_dot_wgmma.h"

namespace metile::lower_test {
namespace {

using ir::ThreadLayout;
using ir::ValueId;

// Every element a thread holds of the [rows, columns] source has its row (axis 1 reduced) or
// column (axis 0) in one of the thread's slots of the slice.
void expect_rows_held(const ThreadLayout& source, int64_t rows, int64_t columns, int axis) {
  const ThreadLayout slice = lower::axis_slice(source, rows, columns, axis);
  EXPECT_EQ(slice.size(), axis == 1 ? rows : columns);
  EXPECT_EQ(slice.thread_count(), source.thread_count());
  for (int64_t t = 0; t < source.thread_count(); ++t)
    for (int64_t r = 0; r < source.elements_per_thread(); ++r) {
      const int64_t index = source.logical_index(t, r);
      const int64_t kept = axis == 1 ? index / columns : index % columns;
      bool held = false;
      for (int64_t s = 0; s < slice.elements_per_thread(); ++s)
        held = held || slice.logical_index(t, s) == kept;
      ASSERT_TRUE(held) << "thread " << t << " lacks " << kept << " in " << slice.str();
    }
}

TEST(AxisSlice, StripedRowsReplicateOverTheirLanes) {
  // [16, 32] over 128 threads, 4 each: columns are lanes, rows are the warp and the register.
  const ThreadLayout source = ThreadLayout::identity(512, 4);
  const ThreadLayout rows = lower::axis_slice(source, 16, 32, 1);
  EXPECT_EQ(rows, ThreadLayout({5, 6, 7, 8}, 0, 4, 128));
  EXPECT_EQ(rows.replica_bits(), 31);
  expect_rows_held(source, 16, 32, 1);
  expect_rows_held(source, 16, 32, 0);
}

TEST(AxisSlice, WgmmaAccumulatorRowsLiveInQuads) {
  // wgmma's accumulator: a row's 64 columns are two registers of four lanes of a quad, so each
  // row statistic is held by the quad's four lanes in one of two registers.
  const ThreadLayout acc = lower::wgmma_accumulator_layout(128, 64, 2);
  const ThreadLayout rows = lower::axis_slice(acc, 128, 64, 1);
  EXPECT_EQ(rows.elements_per_thread(), 2);
  EXPECT_EQ(rows.replica_bits(), 3);
  expect_rows_held(acc, 128, 64, 1);
  expect_rows_held(acc, 128, 64, 0);
  expect_rows_held(lower::wgmma_accumulator_layout(128, 128, 2), 128, 128, 1);
}

// reduce_axis(kind, [rows, columns] load, axis), its result stored, and `extra` applied to it.
ir::Kernel reduction(int64_t rows, int64_t columns, bool full_reduce_of_result) {
  ir::Kernel k;
  k.name = "rows";
  ir::TileBuilder b(k);
  const ValueId in = b.add_param("in", ir::Type::ptr(ir::DType::f32), "read");
  const ValueId out = b.add_param("out", ir::Type::ptr(ir::DType::f32), "write");
  const ValueId x = b.reshape(b.load(b.ptr_add(in, b.arange(0, rows * columns))), {rows, columns});
  const ValueId sums = b.reduce_axis("sum", x, 1);
  b.store(b.ptr_add(out, b.arange(0, rows)), sums);
  if (full_reduce_of_result) b.store(out, b.reduce("sum", sums));
  return k;
}

lower::ThreadPlan plan_of(int threads) {
  lower::ThreadPlan plan(threads, "test");
  return plan;
}

TEST(PlanAxisSlices, PlansTheSliceForReductionsInsideSimdGroups) {
  lower::ThreadPlan plan = plan_of(128);
  lower::plan_axis_slices(reduction(16, 32, false), plan, 32);
  ASSERT_EQ(plan.layouts.size(), 1u);
  EXPECT_EQ(plan.layouts[0], ThreadLayout({5, 6, 7, 8}, 0, 4, 128));
}

TEST(PlanAxisSlices, LeavesReductionsAcrossSimdGroupsAndUnsafeUsesAlone) {
  lower::ThreadPlan across = plan_of(128);  // 64 columns: lane bits and a SIMD group bit
  lower::plan_axis_slices(reduction(8, 64, false), across, 32);
  EXPECT_TRUE(across.layouts.empty());
  lower::ThreadPlan whole = plan_of(128);  // a whole-tile reduce would count every replica
  lower::plan_axis_slices(reduction(16, 32, true), whole, 32);
  EXPECT_TRUE(whole.layouts.empty());
}

}  // namespace
}  // namespace metile::lower_test
