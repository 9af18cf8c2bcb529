#include "metile/schedule/plan_schedule.h"

#include "metile/schedule/planner.h"

namespace metile::schedule {

SchedulePlan plan_schedule(const ir::Kernel& tile, const target::Target& target,
                           const lower::ThreadPlan& lanes, const std::optional<Schedule>& requested,
                           const AsyncGemm* gemm, const std::string& tensor_backend_declined) {
  SchedulePlan plan = planning::Planner(tile, target, lanes, requested, gemm).run();
  if (!tensor_backend_declined.empty() && plan.backend != Backend::TensorOps)
    plan.backend_reason +=
        "; the tensor backend does not take this kernel: " + tensor_backend_declined;
  return plan;
}

}  // namespace metile::schedule
