// CSE and DCE decide from the traits ops.def declares: every op is merged only when Pure and
// kept when unused only when it writes memory or ends a region.
#include <gtest/gtest.h>

#include "metile/transform/cse.h"
#include "metile/transform/dce.h"
#include "tests/ir/op_samples.h"

namespace metile::transform {
namespace {

using ir::OpInfo;
using ir::Trait;

size_t count(const ir::Kernel& k, ir::OpKind kind) {
  size_t n = 0;
  ir::walk(k.body, [&](const ir::Op& op) { n += op.kind == kind; });
  return n;
}

TEST(OpTraits, CseMergesExactlyThePureOps) {
  for (const OpInfo& info : ir::all_ops()) {
    if (info.results.min != 1 || info.regions.max > 0) continue;
    ir::Kernel k = ir::op_samples::kernel_for(info);
    for (int copy = 0; copy < 2; ++copy)
      k.body.ops.push_back(ir::op_samples::make_op(k, info.kind, info.operands.min,
                                                   k.params[0].value, 1, 0,
                                                   ir::op_samples::valid_attrs(info)));
    const size_t left = count(eliminate_common_subexpressions(k).kernel, info.kind);
    EXPECT_EQ(left, info.has(Trait::Pure) ? 1u : 2u) << info.name;
  }
}

TEST(OpTraits, DceKeepsUnusedOpsOnlyWithEffects) {
  for (const OpInfo& info : ir::all_ops()) {
    if (info.regions.max > 0) continue;
    ir::Kernel k = ir::op_samples::one_op(info, info.operands.min, info.results.min, 0,
                                          ir::op_samples::valid_attrs(info));
    const bool kept = info.has(Trait::WritesMemory) || info.has(Trait::Terminator);
    EXPECT_EQ(count(eliminate_dead_code(k).kernel, info.kind), kept ? 1u : 0u) << info.name;
  }
}

}  // namespace
}  // namespace metile::transform
