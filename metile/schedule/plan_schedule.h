// plan_schedule: the first of seed 002's three scheduling steps. From Tile IR, the Target and
// the caller's Schedule it picks a legal backend, SIMD-group geometry, staging policy, vector
// width and buffering policy, each with its reason (schedule_plan.h). Lowering implements the
// plan; it never revisits a decision made here.
#pragma once

#include <optional>
#include <string>

#include "metile/ir/ir.h"
#include "metile/lower/plan_threads.h"
#include "metile/schedule/schedule.h"
#include "metile/schedule/schedule_plan.h"
#include "metile/target/target.h"

namespace metile::schedule {

// `lanes` is plan_threads' lane geometry of the traced kernel. An explicit requirement the
// kernel or the Target cannot meet is a UserError (NotSupported for a facility no Target or
// no lowering has yet; OutOfResources for threadgroup memory) naming the control, the kernel
// and why; an automatic control is decided, never rejected.
// `gemm`: what match_async_gemm found in the kernel before its descriptors were expanded
// (nullptr: not looked for), which the wgmma_tma strategy needs.
// `tensor_backend_declined`: why form_descriptor_matmul did not form the kernel's descriptor
// GEMM for the tensor backend that auto wanted (empty: nothing declined); the backend reason
// then says it.
SchedulePlan plan_schedule(const ir::Kernel& tile, const target::Target& target,
                           const lower::ThreadPlan& lanes, const std::optional<Schedule>& requested,
                           const AsyncGemm* gemm = nullptr,
                           const std::string& tensor_backend_declined = {});

}  // namespace metile::schedule
