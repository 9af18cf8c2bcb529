// The interpreter's checks are what make the lowering tests meaningful: these tests show
// that it catches a missing barrier, an unmasked access, a divergent barrier and undefined
// scalar arithmetic.
#include "tests/lower/metal_interpreter.h"

#include <gtest/gtest.h>

#include "metile/ir/builder.h"
#include "tests/lower/lowering_harness.h"
#include "tests/lower/test_kernels.h"

namespace metile::lower_test {
namespace {

using ir::DType;
using ir::OpKind;
using ir::Type;

std::string run_error(const ir::Kernel& metal, std::vector<Buffer> buffers,
                      const std::vector<Arg>& args) {
  try {
    run_metal(metal, buffers, args, {1, 1, 1});
  } catch (const InterpreterError& e) {
    return e.what();
  }
  return "(no error)";
}

void remove_barriers(ir::Block& block, int& keep) {
  std::vector<ir::Op> ops;
  for (ir::Op& op : block.ops) {
    for (ir::Block& r : op.regions) remove_barriers(r, keep);
    if (op.kind == OpKind::Barrier && keep-- <= 0) continue;
    ops.push_back(std::move(op));
  }
  block.ops = std::move(ops);
}

TEST(MetalInterpreter, CatchesAMissingReleaseBarrier) {
  ir::Kernel metal = lower_checked(softmax(256)).metal;
  const std::vector<float> x(300, 1.0f);
  std::vector<Arg> args = {Arg::buf(0), Arg::buf(1), Arg::scalar(300), Arg::scalar(300)};
  EXPECT_EQ(run_error(metal, {Buffer::f32(x), Buffer::zeros(DType::f32, 300)}, args), "(no error)");
  // Keep the first reduction's publish barrier only: its release and everything after go.
  int keep = 1;
  remove_barriers(metal.body, keep);
  const std::string e = run_error(metal, {Buffer::f32(x), Buffer::zeros(DType::f32, 300)}, args);
  EXPECT_NE(e.find("with no barrier in between"), std::string::npos) << e;
}

TEST(MetalInterpreter, CatchesAnUnmaskedAccess) {
  ir::Kernel k;
  k.name = "unmasked";
  ir::TileBuilder b(k);
  ir::ValueId x = b.add_param("x", Type::ptr(DType::f32), "read");
  ir::ValueId out = b.add_param("out", Type::ptr(DType::f32), "write");
  ir::ValueId offsets = b.arange(0, 64);
  b.store(b.ptr_add(out, offsets), b.load(b.ptr_add(x, offsets)));
  const ir::Kernel metal = lower_checked(k).metal;
  const std::string e =
      run_error(metal, {Buffer::zeros(DType::f32, 50), Buffer::zeros(DType::f32, 64)},
                {Arg::buf(0), Arg::buf(1)});
  EXPECT_NE(e.find("out-of-bounds access to element 50 of buffer 0"), std::string::npos) << e;
}

TEST(MetalInterpreter, CatchesADivergentBarrier) {
  ir::Kernel metal;
  metal.dialect = ir::Dialect::Metal;
  metal.name = "divergent";
  metal.attrs["threads_per_threadgroup"] = int64_t{64};
  metal.attrs["threadgroup_bytes"] = int64_t{0};
  ir::Builder b(metal);
  ir::ValueId t =
      b.create1(OpKind::ThreadIndex, {}, Type::scalar(DType::i32), {{"axis", int64_t{0}}});
  ir::ValueId five =
      b.create1(OpKind::Constant, {}, Type::scalar(DType::i32), {{"value", int64_t{5}}});
  b.begin_if(
      b.create1(OpKind::Cmp, {t, five}, Type::scalar(DType::i1), {{"pred", std::string("lt")}}));
  b.create(OpKind::Barrier, {}, {},
           {{"scope", std::string("threadgroup")}, {"mem", std::string("all")}});
  b.begin_else({});
  b.end_if({});
  const std::string e = run_error(metal, {}, {});
  EXPECT_NE(e.find("divergent barrier"), std::string::npos) << e;
}

// Scalar ops run through the shared scalar evaluator, whose undefined cases are errors.
TEST(MetalInterpreter, CatchesIntegerDivisionByZeroAndOversizedShifts) {
  for (OpKind kind : {OpKind::Div, OpKind::Shl}) {
    ir::Kernel metal;
    metal.dialect = ir::Dialect::Metal;
    metal.name = "undefined";
    metal.attrs["threads_per_threadgroup"] = int64_t{64};
    metal.attrs["threadgroup_bytes"] = int64_t{0};
    ir::Builder b(metal);
    const ir::ValueId t =
        b.create1(OpKind::ThreadIndex, {}, Type::scalar(DType::i32), {{"axis", int64_t{0}}});
    const ir::ValueId seven =
        b.create1(OpKind::Constant, {}, Type::scalar(DType::i32), {{"value", int64_t{7}}});
    b.create1(kind, {seven, t}, Type::scalar(DType::i32), {});
    const std::string e = run_error(metal, {}, {});
    if (kind == OpKind::Div)
      EXPECT_NE(e.find("thread 0, div: integer division by zero"), std::string::npos) << e;
    else
      EXPECT_NE(e.find("thread 32, shl: shift amount outside"), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace metile::lower_test
