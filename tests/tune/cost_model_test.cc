// The operation-cost model on hand-written Metal IR: loops with constant bounds weight their
// bodies, an if/else counts its costlier branch, and the estimate reads the Target's figures.
#include "metile/tune/cost_model.h"

#include <gtest/gtest.h>

#include "metile/ir/parser.h"

namespace metile::tune {
namespace {

constexpr const char* kKernel = R"(
metal.kernel @k(%x: ptr<f32> {access = "read"}, %y: ptr<f32> {access = "write"}, %n: i32) attributes {threadgroup_bytes = 0, threads_per_threadgroup = 32} {
  %tid = thread_index {axis = 0} : i32
  %zero = constant {value = 0} : i32
  %four = constant {value = 4} : i32
  %one = constant {value = 1} : i32
  %init = constant {value = 0.0} : f32
  %s = for %zero, %four, %one, %init : f32 {
  ^(%i: i32, %acc: f32):
    %j = add %tid, %i : i32
    %p = ptr_add %x, %j : ptr<f32>
    %v = load %p : f32
    %e = exp %v : f32
    %a = add %acc, %e : f32
    yield %a
  }
  %t = for %zero, %n, %one, %s : f32 {
  ^(%k: i32, %prod: f32):
    %b = mul %prod, %prod : f32
    yield %b
  }
  %c = cmp %tid, %n {pred = "lt"} : i1
  if %c {
    %q = ptr_add %y, %tid : ptr<f32>
    store %q, %t
    yield
  } else {
    %d = add %t, %t : f32
    %f = add %d, %d : f32
    yield
  }
}
)";

TEST(CostModel, CountsLoopsByTripCountAndTheCostlierBranch) {
  const OperationCounts c = count_operations(ir::parse(kKernel));
  EXPECT_EQ(c.device_bytes, 4 * 4 + 4);  // four loads in the loop, the store in the if
  EXPECT_EQ(c.memory_accesses, 4 + 1);
  EXPECT_EQ(c.transcendental, 4);              // exp, four times
  EXPECT_EQ(c.arithmetic, 4 * 3 + 1 + 1 + 2);  // the loop's add, ptr_add, add; mul once; cmp;
                                               // the else branch's two adds (the then: one)
  EXPECT_EQ(c.dynamic_loops, 1);               // the loop to %n counts once
  EXPECT_EQ(c.barriers, 0);
}

TEST(CostModel, EstimatesFromTheTargetsFigures) {
  OperationCounts c;
  c.device_bytes = 8;
  c.arithmetic = 10;
  c.transcendental = 1;
  target::Target t = target::target_by_name("host");
  t.launch_cost_us = 2;
  t.memory_bandwidth_gbps = 1;  // 1e3 bytes a microsecond
  t.issue_rate_gops = 1;
  t.transcendental_weight = 10;
  const CostEstimate e = estimate_cost(c, 10, 100, t);  // 1000 threads
  EXPECT_DOUBLE_EQ(e.memory_us, 8.0);
  EXPECT_DOUBLE_EQ(e.issue_us, 20.0);
  EXPECT_DOUBLE_EQ(e.microseconds, 22.0);
  EXPECT_EQ(e.to_json()["bound"], "issue");
  t.memory_bandwidth_gbps = 0.1;
  EXPECT_EQ(estimate_cost(c, 10, 100, t).to_json()["bound"], "memory");
}

}  // namespace
}  // namespace metile::tune
