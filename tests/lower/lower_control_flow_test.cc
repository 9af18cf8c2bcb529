#include <gtest/gtest.h>

#include "tests/ir/op_samples.h"
#include "tests/lower/lowering_harness.h"
#include "tests/lower/test_kernels.h"

namespace metile::lower_test {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;
using ir::ValueId;

std::string lower_error(ir::Kernel k, int threads = 0) {
  try {
    lower_checked(std::move(k), threads);
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

// Manual shared-memory code: every thread writes shared[t], a barrier, then reads its mirror.
ir::Kernel reverse_through_shared(int64_t size) {
  ir::Kernel k;
  k.name = "reverse";
  ir::TileBuilder b(k);
  ValueId in = b.add_param("in", Type::ptr(DType::f32), "read");
  ValueId out = b.add_param("out", Type::ptr(DType::f32), "write");
  ValueId shared = b.shared_alloc(size, DType::f32);
  ValueId t = b.thread_id();
  b.store(b.ptr_add(shared, t), b.load(b.ptr_add(in, t)));
  b.barrier();
  ValueId mirror = b.binary(OpKind::Sub, b.constant_int(size - 1), t);
  b.store(b.ptr_add(out, t), b.load(b.ptr_add(shared, mirror)));
  k.attrs["num_threads"] = size;
  return k;
}

TEST(LowerControlFlow, SharedMemoryAndBarrier) {
  lower::LoweringResult r = lower_checked(reverse_through_shared(64));
  ASSERT_EQ(r.allocations.size(), 1u);
  EXPECT_EQ(r.allocations[0].offset, 0);
  EXPECT_EQ(r.allocations[0].bytes, 256);
  EXPECT_EQ(std::get<int64_t>(r.metal.attrs.at("threadgroup_bytes")), 256);
  std::vector<float> in(64);
  for (int i = 0; i < 64; ++i) in[i] = float(i);
  std::vector<Buffer> buffers = {Buffer::f32(in), Buffer::zeros(DType::f32, 64)};
  run_metal(r.metal, buffers, {Arg::buf(0), Arg::buf(1)}, {1, 1, 1});
  for (int i = 0; i < 64; ++i) EXPECT_EQ(buffers[1].floats()[i], 63 - i);
}

TEST(LowerControlFlow, UserSharedMemoryComesBeforeScratch) {
  ir::Kernel k = row_sum(1024);
  ir::TileBuilder b(k);
  b.shared_alloc(3, DType::f32);  // 12 bytes, rounded up to 16
  lower::LoweringResult r = lower_checked(k);
  ASSERT_EQ(r.allocations.size(), 2u);
  // The reduction's scratch is allocated first but sits after the user's 16 bytes.
  EXPECT_NE(r.allocations[0].purpose.find("reduce.sum private scratch"), std::string::npos);
  EXPECT_EQ(r.allocations[0].offset, 16);
  EXPECT_NE(r.allocations[1].purpose.find("shared_alloc"), std::string::npos);
  EXPECT_EQ(r.allocations[1].offset, 0);
  EXPECT_EQ(r.allocations[1].bytes, 12);
  EXPECT_EQ(std::get<int64_t>(r.metal.attrs.at("threadgroup_bytes")), 48);
}

TEST(LowerControlFlow, PerThreadIfOfScalarCodeIsAllowed) {
  ir::Kernel k;
  k.name = "odd_even";
  ir::TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  ValueId t = b.thread_id();
  ValueId odd = b.cmp("eq", b.binary(OpKind::And, t, b.constant_int(1)), b.constant_int(1));
  b.begin_if(odd);
  ValueId a = b.binary(OpKind::Mul, t, b.constant_int(10));
  b.begin_else({a});
  ValueId c = b.binary(OpKind::Sub, b.constant_int(0), t);
  ValueId v = b.end_if({c})[0];
  b.store(b.ptr_add(out, t), v);
  k.attrs["num_threads"] = int64_t{64};
  lower::LoweringResult r = lower_checked(k);
  std::vector<Buffer> buffers = {Buffer::zeros(DType::i32, 64)};
  run_metal(r.metal, buffers, {Arg::buf(0)}, {1, 1, 1});
  for (int i = 0; i < 64; ++i) EXPECT_EQ(buffers[0].ints()[i], i % 2 ? 10 * i : -i);
}

TEST(LowerControlFlow, UniformIfMayHoldTilesAndReductions) {
  ir::Kernel k;
  k.name = "uniform_if";
  ir::TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  ValueId flag = b.add_param("flag", Type::scalar(DType::i32));
  b.begin_if(b.cmp("ne", flag, b.constant_int(0)));
  ValueId s = b.reduce("sum", b.arange(0, 128));
  b.begin_else({s});
  ValueId z = b.constant_int(-1);
  ValueId v = b.end_if({z})[0];
  b.store(out, v);
  const ir::Kernel metal = lower_checked(k, 64).metal;
  for (int flag_value : {0, 1}) {
    std::vector<Buffer> buffers = {Buffer::zeros(DType::i32, 1)};
    run_metal(metal, buffers, {Arg::buf(0), Arg::scalar(flag_value)}, {1, 1, 1});
    EXPECT_EQ(buffers[0].ints()[0], flag_value ? 127 * 128 / 2 : -1);
  }
}

TEST(LowerControlFlow, PerThreadIfMayNotHoldTileOps) {
  ir::Kernel k;
  k.name = "bad_if";
  ir::TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  b.begin_if(b.cmp("lt", b.thread_id(), b.constant_int(5)));
  b.store(out, b.reduce("sum", b.arange(0, 64)));
  b.begin_else({});
  b.end_if({});
  const std::string e = lower_error(k);
  EXPECT_NE(e.find("if: the condition"), std::string::npos) << e;
  EXPECT_NE(e.find("differs between threads"), std::string::npos) << e;
}

TEST(LowerControlFlow, PerThreadLoopBoundsRunEachThreadsOwnTripCount) {
  // for i in range(thread_id(), 64, 16): count += 1; out[thread_id()] = count.
  ir::Kernel k;
  k.name = "per_thread_loop";
  ir::TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  auto scope =
      b.begin_for(b.thread_id(), b.constant_int(64), b.constant_int(16), {b.constant_int(0)});
  ValueId next = b.binary(OpKind::Add, scope.carried[0], b.constant_int(1));
  ValueId count = b.end_for({next})[0];
  b.store(b.ptr_add(out, b.thread_id()), count);
  k.attrs["num_threads"] = int64_t{32};
  const ir::Kernel metal = lower_checked(k, 32).metal;
  std::vector<Buffer> buffers = {Buffer::zeros(DType::i32, 32)};
  run_metal(metal, buffers, {Arg::buf(0)}, {1, 1, 1});
  for (int t = 0; t < 32; ++t) EXPECT_EQ(buffers[0].ints()[t], (64 - t + 15) / 16) << t;
}

TEST(LowerControlFlow, PerThreadLoopBoundsMayNotHoldConvergentOps) {
  ir::Kernel k;
  k.name = "bad_loop";
  ir::TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  b.begin_for(b.constant_int(0), b.thread_id(), b.constant_int(1), {});
  b.barrier();
  b.end_for({});
  b.store(out, b.constant_int(0));
  const std::string e = lower_error(k);
  EXPECT_NE(e.find("for: the loop end"), std::string::npos) << e;
  EXPECT_NE(e.find("differs between threads"), std::string::npos) << e;
  EXPECT_NE(e.find("but it holds barrier"), std::string::npos) << e;
}

TEST(LowerControlFlow, SplatOfAPerThreadScalarIsRejected) {
  ir::Kernel k;
  k.name = "bad_splat";
  ir::TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  ValueId tile = b.binary(OpKind::Add, b.arange(0, 64), b.thread_id());
  b.store(b.ptr_add(out, b.arange(0, 64)), tile);
  const std::string e = lower_error(k);
  EXPECT_NE(e.find("splat: the splatted scalar"), std::string::npos) << e;
}

TEST(LowerControlFlow, CarriedScalarBecomesPerThread) {
  // acc starts uniform (0) but accumulates thread ids: the analysis must see it per-thread,
  // so a splat of it is rejected while a plain per-thread store works.
  ir::Kernel k;
  k.name = "per_thread_carry";
  ir::TileBuilder b(k);
  ValueId out = b.add_param("out", Type::ptr(DType::i32), "write");
  auto scope =
      b.begin_for(b.constant_int(0), b.constant_int(3), b.constant_int(1), {b.constant_int(0)});
  ValueId next = b.binary(OpKind::Add, scope.carried[0], b.thread_id());
  ValueId acc = b.end_for({next})[0];
  b.store(b.ptr_add(out, b.thread_id()), acc);
  k.attrs["num_threads"] = int64_t{32};
  const ir::Kernel metal = lower_checked(k).metal;
  std::vector<Buffer> buffers = {Buffer::zeros(DType::i32, 32)};
  run_metal(metal, buffers, {Arg::buf(0)}, {1, 1, 1});
  for (int i = 0; i < 32; ++i) EXPECT_EQ(buffers[0].ints()[i], 3 * i);

  ir::Kernel bad = k;
  ir::TileBuilder bb(bad);
  bb.store(bb.ptr_add(out, bb.arange(0, 32)), bb.splat(acc, {32}));
  EXPECT_NE(lower_error(bad).find("splat"), std::string::npos);
}

TEST(LowerControlFlow, ThreadgroupMemoryLimitIsAUserError) {
  ir::Kernel k = reverse_through_shared(64);
  ir::TileBuilder b(k);
  b.shared_alloc(10000, DType::f32);
  const std::string e = lower_error(k);
  EXPECT_NE(e.find("bytes of threadgroup memory; target apple-m3 has 32768"), std::string::npos)
      << e;
}

TEST(LowerControlFlow, DescriptorsMustBeExpandedFirst) {
  lower::ThreadPlan plan{64, "test"};
  try {
    lower::lower_to_metal(tensor_copy(16, 16, 0), plan, test_target(), schedule::SchedulePlan{});
    FAIL();
  } catch (const NotSupported& e) {
    EXPECT_NE(std::string(e.what()).find("expand_tensor_access"), std::string::npos) << e.what();
  }
}

// Every convergent Tile IR op (ops.def) is rejected in a per-thread branch; reduce,
// reduce_axis, reduce_combine, scan, dot, trans and convert_layout are left out because their
// tile operand alone already rejects them (PerThreadIfMayNotHoldTileOps).
TEST(LowerControlFlow, PerThreadIfMayNotHoldConvergentOps) {
  for (const ir::OpInfo& info : ir::all_ops()) {
    if (!info.in_tile || !info.has(ir::Trait::Convergent) || info.kind == OpKind::Reduce ||
        info.kind == OpKind::ReduceAxis || info.kind == OpKind::ReduceCombine ||
        info.kind == OpKind::Scan || info.kind == OpKind::Dot || info.kind == OpKind::XorPermute ||
        info.kind == OpKind::Trans || info.kind == OpKind::ConvertLayout ||
        info.kind == OpKind::DescriptorMatmul)  // form_descriptor_matmul makes it top-level only
      continue;
    ir::Kernel k;
    k.name = "bad_if";
    ir::TileBuilder b(k);
    b.add_param("out", Type::ptr(DType::i32), "write");
    const ValueId tiles = b.add_param("tiles", Type::ptr(DType::f32), "read_write");
    const ValueId t = b.thread_id();
    // The fragment ops need a pointer and a fragment to be valid Tile IR; the stored fragment
    // is filled in the branch too (outside it, lowering would first ask for the
    // simdgroup_inline schedule), so the error names that first fragment op.
    const ValueId shared = b.shared_alloc(64, DType::f32);
    const ValueId zero = b.constant_int(0), eight = b.constant_int(8);
    b.begin_if(b.cmp("lt", t, b.constant_int(5)));
    std::string held(info.name);
    if (info.kind == OpKind::MatrixLoad) {
      b.matrix_load(shared, zero, eight, false);
    } else if (info.kind == OpKind::MatrixStore) {
      b.matrix_store(b.matrix_fill(b.constant(0.0, DType::f32)), shared, zero, eight, false);
      held = "matrix_fill";
    } else if (info.kind == OpKind::DeviceTileLoad || info.kind == OpKind::DeviceTileStore) {
      const ir::TileBuilder::DeviceTile tile{tiles, zero, zero, eight, eight, 8, 1, shared, 8};
      if (info.kind == OpKind::DeviceTileLoad)
        b.device_tile_load(tile);
      else
        b.device_tile_store(b.matrix_fill(b.constant(0.0, DType::f32)), tile);
      if (info.kind == OpKind::DeviceTileStore) held = "matrix_fill";
    } else {
      b.create(info.kind, std::vector<ValueId>(info.operands.min, t),
               std::vector<Type>(info.results.min, Type::scalar(DType::i32)),
               ir::op_samples::valid_attrs(info));
    }
    b.begin_else({});
    b.end_if({});
    const std::string e = lower_error(k);
    EXPECT_NE(e.find("but they hold " + held), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace metile::lower_test
