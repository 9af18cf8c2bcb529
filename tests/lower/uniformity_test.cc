// The uniformity analysis decides from the traits ops.def declares: Varying results are
// per-thread, UniformResult ones uniform, the rest uniform exactly when their operands are.
// Scalar atomics are the exception: with uniform operands outside per-thread regions one
// thread performs them for the program (lower_memory.cc), and every thread gets the old value.
#include "metile/lower/uniformity.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "metile/ir/parser.h"
#include "tests/ir/op_samples.h"

namespace metile::lower {
namespace {

using ir::OpInfo;
using ir::Trait;

// Whether the result of one `info` op is uniform when its operands are %n (uniform) or, with
// `per_thread_operands`, a thread_id.
bool result_uniform(const OpInfo& info, bool per_thread_operands) {
  ir::Kernel k = ir::op_samples::kernel_for(ir::op_info(ir::OpKind::ThreadId));
  ir::ValueId operand = k.params[0].value;
  if (per_thread_operands) {
    k.body.ops.push_back(
        ir::op_samples::make_op(k, ir::OpKind::ThreadId, 0, ir::kNoValue, 1, 0, {}));
    operand = k.body.ops.back().results[0];
  }
  k.body.ops.push_back(ir::op_samples::make_op(k, info.kind, info.operands.min, operand, 1, 0,
                                               ir::op_samples::valid_attrs(info)));
  return analyze_uniformity(k)[k.body.ops.back().results[0]];
}

TEST(Uniformity, FollowsTheTraits) {
  for (const OpInfo& info : ir::all_ops()) {
    if (info.results.min != 1 || info.regions.max > 0) continue;
    const bool atomic = info.kind == ir::OpKind::AtomicRmw || info.kind == ir::OpKind::AtomicCas;
    EXPECT_EQ(result_uniform(info, false), atomic || !info.has(Trait::Varying)) << info.name;
    if (info.operands.min > 0) {
      EXPECT_EQ(result_uniform(info, true), info.has(Trait::UniformResult)) << info.name;
    }
  }
}

TEST(Uniformity, AScalarAtomicIsUniformOnlyWhereEveryThreadRunsItWithTheSameOperands) {
  constexpr const char* kText = R"(tile.kernel @k(%p: ptr<i32> {access = "read_write"}, %n: i32) {
  %one = constant {value = 1} : i32
  %old = atomic_rmw %p, %one {kind = "add", scope = "gpu", sem = "acq_rel"} : i32
  %t = thread_id : i32
  %q = ptr_add %p, %t : ptr<i32>
  %own = atomic_rmw %q, %one {kind = "add", scope = "gpu", sem = "acq_rel"} : i32
  %first = cmp %t, %n {pred = "lt"} : i1
  %r = if %first : i32 {
    %inner = atomic_rmw %p, %one {kind = "add", scope = "gpu", sem = "acq_rel"} : i32
    yield %inner
  } else {
    yield %one
  }
})";
  const ir::Kernel k = ir::parse(kText);
  const std::vector<bool> uniform = analyze_uniformity(k);
  const std::vector<ir::Op>& ops = k.body.ops;                 // one, old, t, q, own, first, if
  EXPECT_TRUE(uniform[ops[1].results[0]]);                     // %old: one thread updates for all
  EXPECT_FALSE(uniform[ops[4].results[0]]);                    // %own: each thread's own address
  EXPECT_FALSE(uniform[ops[6].regions[0].ops[0].results[0]]);  // %inner: a per-thread branch
}

}  // namespace
}  // namespace metile::lower
