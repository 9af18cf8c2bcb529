// Which kernels the host target also gets as a work-group function, and why the others run
// on fibers: the marker line the host compiler reads (host/workgroup_emitter.h).
#include <gtest/gtest.h>

#include "metal_kernels.h"
#include "metile/codegen/emit.h"

namespace metile::codegen::testing {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

std::string host_source(const ir::Kernel& k) {
  return emit(k, target::default_target()).source;
}

TEST(WorkgroupEmitter, BarriersAndCollectivesInStraightLineCodeAreEligible) {
  const std::string src = host_source(reduction_kernel());
  EXPECT_NE(src.find("// meTile host execution: workgroup block_sum_workgroup\n"
                     "#ifdef METILE_HOST_EMULATOR\n"
                     "static void block_sum_workgroup("),
            std::string::npos)
      << src;
  // Each SIMD group's lanes combine in lane order, as simd_sum does on fibers.
  EXPECT_NE(src.find("for (uint metile_l = 1; metile_l < metile_lanes; ++metile_l) metile_acc = "
                     "float(metile_acc + float(metile_wg_v9[metile_base + metile_l]));"),
            std::string::npos)
      << src;
}

TEST(WorkgroupEmitter, OnlyTheHostTargetGetsAWorkgroupFunction) {
  EXPECT_EQ(emit(reduction_kernel(), target::target_by_name("apple-m3")).source.find("meTile host"),
            std::string::npos);
}

// for (i = 0; i < n; ++i) { scratch[tid] = i; barrier; out[tid] += scratch[63 - tid]; }
ir::Kernel barrier_in_loop(bool uniform_bound) {
  ir::Kernel k = metal_kernel("barrier_loop", 64, 256);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::i32), "read_write");
  auto n = b.add_param("n", Type::scalar(DType::i32));
  auto tid = b.named(b.thread_index(), "tid");
  auto scratch =
      b.create1(OpKind::ThreadgroupBuffer, {}, Type::ptr(DType::i32, ir::AddressSpace::Threadgroup),
                {{"offset", int64_t{0}}, {"size", int64_t{64}}});
  auto loop = b.begin_for(b.i32(0), uniform_bound ? n : tid, b.i32(1), {});
  b.store(b.ptr_add(scratch, tid), loop.induction_var);
  b.barrier("threadgroup", "threadgroup");
  auto mine = b.ptr_add(out, tid);
  b.store(mine, b.op(OpKind::Add, b.load(mine),
                     b.load(b.ptr_add(scratch, b.op(OpKind::Sub, b.i32(63), tid)))));
  b.barrier("threadgroup", "threadgroup");
  b.end_for({});
  return k;
}

TEST(WorkgroupEmitter, ABarrierInALoopWithUniformBoundsIsEligible) {
  const std::string src = host_source(barrier_in_loop(true));
  EXPECT_NE(src.find("// meTile host execution: workgroup barrier_loop_workgroup"),
            std::string::npos)
      << src;
  // The loop stays outside the thread loops: its counter is one variable.
  EXPECT_NE(src.find("  for (int i = v5; i < n; i += v4) {\n"), std::string::npos) << src;
}

TEST(WorkgroupEmitter, ABarrierInALoopWhoseBoundsDifferBetweenThreadsRunsOnFibers) {
  const std::string src = host_source(barrier_in_loop(false));
  EXPECT_NE(src.find("// meTile host execution: fibers (a barrier or SIMD collective sits in the "
                     "for, whose bounds may differ between the threads of a threadgroup)\n"),
            std::string::npos)
      << src;
  EXPECT_EQ(src.find("_workgroup("), std::string::npos) << src;
}

// `iterations` times: { scratch[tid] = tid; barrier; out[tid] += scratch[63 - tid]; barrier },
// in straight-line code: two thread loops each.
ir::Kernel barrier_chain(int iterations) {
  ir::Kernel k = metal_kernel("barrier_chain", 64, 256);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::i32), "read_write");
  auto tid = b.named(b.thread_index(), "tid");
  auto scratch =
      b.create1(OpKind::ThreadgroupBuffer, {}, Type::ptr(DType::i32, ir::AddressSpace::Threadgroup),
                {{"offset", int64_t{0}}, {"size", int64_t{64}}});
  auto mine = b.ptr_add(out, tid);
  for (int i = 0; i < iterations; ++i) {
    b.store(b.ptr_add(scratch, tid), tid);
    b.barrier("threadgroup", "threadgroup");
    b.store(mine, b.op(OpKind::Add, b.load(mine),
                       b.load(b.ptr_add(scratch, b.op(OpKind::Sub, b.i32(63), tid)))));
    b.barrier("threadgroup", "threadgroup");
  }
  return k;
}

TEST(WorkgroupEmitter, AKernelOfManyThreadLoopsRunsOnFibers) {
  EXPECT_NE(host_source(barrier_chain(128)).find("// meTile host execution: workgroup "),
            std::string::npos);
  const std::string src = host_source(barrier_chain(129));
  EXPECT_NE(src.find("// meTile host execution: fibers (it would need 258 thread loops, more than "
                     "the 256 the host compiler builds in reasonable time)\n"),
            std::string::npos)
      << src.substr(0, 2000);
  EXPECT_EQ(src.find("_workgroup("), std::string::npos);
}

// out[tid] plus `adds` additions of tid, in one thread loop.
ir::Kernel add_chain(int adds) {
  ir::Kernel k = metal_kernel("add_chain", 64, 0);
  MetalBuilder b(k);
  auto out = b.add_param("out", Type::ptr(DType::i32), "read_write");
  auto tid = b.named(b.thread_index(), "tid");
  auto mine = b.ptr_add(out, tid);
  auto value = b.load(mine);
  for (int i = 0; i < adds; ++i) value = b.op(OpKind::Add, value, tid);
  b.store(mine, value);
  return k;
}

TEST(WorkgroupEmitter, AKernelOfTooManyOpsInItsThreadLoopsRunsOnFibers) {
  EXPECT_NE(host_source(add_chain(16000)).find("// meTile host execution: workgroup "),
            std::string::npos);
  const std::string src = host_source(add_chain(16400));
  EXPECT_NE(src.find("// meTile host execution: fibers (its thread loops would hold "),
            std::string::npos)
      << src.substr(0, 2000);
  EXPECT_NE(src.find(" ops, more than the 16384 the host compiler builds in reasonable time)\n"),
            std::string::npos);
  EXPECT_EQ(src.find("_workgroup("), std::string::npos);
}

}  // namespace
}  // namespace metile::codegen::testing
