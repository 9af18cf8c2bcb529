#include "metile/lower/lower.h"

#include "metile/lower/expand_tensor_access.h"
#include "metile/lower/lower_to_metal.h"
#include "metile/lower/plan_threads.h"

namespace metile::lower {

ir::Kernel lower_to_metal_ir(ir::Kernel tile, const target::Target& target) {
  ir::Kernel expanded = expand_tensor_access(std::move(tile));
  ThreadPlan plan = plan_threads(expanded, target);
  return lower_to_metal(expanded, plan, target).metal;
}

}  // namespace metile::lower
