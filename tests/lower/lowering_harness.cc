#include "tests/lower/lowering_harness.h"

#include "metile/ir/verifier.h"
#include "metile/lower/verify_scratch.h"
#include "metile/schedule/plan_schedule.h"

namespace metile::lower_test {

const target::Target& test_target() {
  return target::target_by_name("apple-m3");
}

namespace {
// The automatic schedule plan of a kernel lowered on `plan`'s threads.
schedule::SchedulePlan elementwise_plan(const ir::Kernel& k, const lower::ThreadPlan& plan) {
  return schedule::plan_schedule(k, test_target(), plan, std::nullopt);
}
}  // namespace

lower::LoweringResult lower_checked(ir::Kernel tile, int threads) {
  ir::verify_or_throw(tile, "");
  ir::Kernel expanded = lower::expand_tensor_access(std::move(tile)).kernel;
  ir::verify_or_throw(expanded, "expand_tensor_access");
  lower::ThreadPlan plan = threads ? lower::ThreadPlan{threads, "forced by the test"}
                                   : lower::plan_threads(expanded, test_target());
  lower::LoweringResult result =
      lower::lower_to_metal(expanded, plan, test_target(), elementwise_plan(expanded, plan));
  ir::verify_or_throw(result.metal, "lower_to_metal");
  lower::verify_scratch(result.metal, test_target().simd_width);
  return result;
}

lower::LoweringResult lower_with_plan(ir::Kernel tile, const lower::ThreadPlan& plan) {
  ir::verify_or_throw(tile, "");
  ir::Kernel expanded = lower::expand_tensor_access(std::move(tile)).kernel;
  lower::LoweringResult result =
      lower::lower_to_metal(expanded, plan, test_target(), elementwise_plan(expanded, plan));
  ir::verify_or_throw(result.metal, "lower_to_metal");
  lower::verify_scratch(result.metal, test_target().simd_width);
  return result;
}

int count_ops(const ir::Kernel& k, ir::OpKind kind) {
  int n = 0;
  ir::walk(k.body, [&](const ir::Op& op) { n += op.kind == kind; });
  return n;
}

bool has_tiles(const ir::Kernel& k) {
  for (const ir::Type& t : k.types)
    if (t.is_tile() || t.is_desc()) return true;
  return false;
}

}  // namespace metile::lower_test
