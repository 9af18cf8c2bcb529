// The operation-cost model on hand-written Metal IR: loops with constant bounds weight their
// bodies, an if/else counts its costlier branch, sm90's asynchronous pipeline counts as
// barriers, copies and multiply-accumulates, and the estimate reads the Target's figures.
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

// sm90's pipeline (verify_async_pipeline's good ring, four K steps): mbarrier phases and wgmma's
// fences, commits and waits count as barriers, wgmma_mma as a multiply-accumulate, and each
// stage's expected bytes as device bytes, a share per thread of the threadgroup of 256.
constexpr const char* kRing = R"(
metal.kernel @ring(%n: i32) attributes {threadgroup_bytes = 8224, threads_per_threadgroup = 256, tensor_maps = 0} {
  %tid = thread_index {axis = 0} : i32
  %ring = threadgroup_buffer {offset = 0, size = 4096} : ptr<bf16, threadgroup>
  %bars = threadgroup_buffer {offset = 8192, size = 4} : ptr<i64, threadgroup>
  %zero = constant {value = 0} : i32
  %one = constant {value = 1} : i32
  %two = constant {value = 2} : i32
  %four = constant {value = 4} : i32
  %stage_elements = constant {value = 2048} : i32
  %producer_thread = constant {value = 128} : i32
  %f0 = constant {value = 0.0} : f32
  %is_producer = cmp %tid, %producer_thread {pred = "eq"} : i1
  if %is_producer {
    for %zero, %four, %one {
    ^(%i: i32):
      %s = rem %i, %two : i32
      %round = div %i, %two : i32
      %phase = and %round, %one : i32
      %free = xor %phase, %one : i32
      %es = add %s, %two : i32
      %empty = ptr_add %bars, %es : ptr<i64, threadgroup>
      mbarrier_wait %empty, %free
      %full = ptr_add %bars, %s : ptr<i64, threadgroup>
      mbarrier_arrive_expect_tx %full {bytes = 4096}
      %offset = mul %s, %stage_elements : i32
      %dst = ptr_add %ring, %offset : ptr<bf16, threadgroup>
      tma_load %dst, %full, %zero, %i {map = 0}
      yield
    }
    yield
  } else {
    %acc0, %acc1, %acc2, %acc3 = for %zero, %four, %one, %f0, %f0, %f0, %f0 : f32, f32, f32, f32 {
    ^(%j: i32, %c0: f32, %c1: f32, %c2: f32, %c3: f32):
      %cs = rem %j, %two : i32
      %cround = div %j, %two : i32
      %cphase = and %cround, %one : i32
      %cfull = ptr_add %bars, %cs : ptr<i64, threadgroup>
      mbarrier_wait %cfull, %cphase
      wgmma_fence
      %coffset = mul %cs, %stage_elements : i32
      %a = ptr_add %ring, %coffset : ptr<bf16, threadgroup>
      %r0, %r1, %r2, %r3 = wgmma_mma %a, %a, %c0, %c1, %c2, %c3 {b_block_bytes = 1024, n = 8} : f32, f32, f32, f32
      wgmma_commit
      wgmma_wait {pending = 0}
      %ces = add %cs, %two : i32
      %cempty = ptr_add %bars, %ces : ptr<i64, threadgroup>
      mbarrier_arrive %cempty
      yield %r0, %r1, %r2, %r3
    }
    yield
  }
}
)";

TEST(CostModel, CountsTheAsyncPipelineAsBarriersBytesAndMmas) {
  const OperationCounts c = count_operations(ir::parse(kRing));
  EXPECT_EQ(c.device_bytes, 4 * 4096.0 / 256);  // the producer's four stages
  EXPECT_EQ(c.memory_accesses, 4);              // its four tma_loads
  EXPECT_EQ(c.barriers, 4 * 5);                 // the consumer's wait, fence, commit, wait, arrive
  EXPECT_EQ(c.matrix_mma, 4);
  EXPECT_EQ(c.dynamic_loops, 0);
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
