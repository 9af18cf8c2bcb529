// The uniformity analysis decides from the traits ops.def declares: Varying results are
// per-thread, UniformResult ones uniform, the rest uniform exactly when their operands are.
#include "metile/lower/uniformity.h"

#include <gtest/gtest.h>

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
    EXPECT_EQ(result_uniform(info, false), !info.has(Trait::Varying)) << info.name;
    if (info.operands.min > 0) {
      EXPECT_EQ(result_uniform(info, true), info.has(Trait::UniformResult)) << info.name;
    }
  }
}

}  // namespace
}  // namespace metile::lower
