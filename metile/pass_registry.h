// Every pipeline step as a named pass. pipeline.cc runs them by these names, metile-opt runs
// any sequence of them (--pass NAME), and the ExecutionReport lists them under these names.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "metile/codegen/emit.h"
#include "metile/ir/ownership.h"
#include "metile/ir/pass_result.h"
#include "metile/lower/group_vector_accesses.h"
#include "metile/lower/lower.h"
#include "metile/pipeline.h"
#include "metile/schedule/execution_report.h"
#include "metile/schedule/schedule_plan.h"
#include "metile/target/target.h"
#include "metile/transform/eliminate_redundant_conversions.h"
#include "metile/transform/merge_online_reductions.h"
#include "metile/transform/peel_complete_iterations.h"

namespace metile {

// What passes read besides the kernel (the options), and what the steps whose product is not
// IR leave for the steps after them.
struct PassContext {
  explicit PassContext(const target::Target& t, MathMode m = MathMode::Default)
      : target(t), math(m) {}

  const target::Target& target;
  MathMode math = MathMode::Default;
  std::optional<ir::OwnershipMap> ownership;  // set by check_ownership, read by lowering
  std::vector<transform::LayoutOptimization>
      layout_optimizations;  // by eliminate_redundant_conversions
  std::vector<transform::OnlineReductionRecord> online_reductions;  // by merge_online_reductions
  std::vector<transform::PeeledLoop> peeled_loops;                  // by peel_complete_iterations
  schedule::PipeliningRecord pipelining;                            // by prefetch_dot_operands
  std::optional<schedule::AsyncGemm> async_gemm;  // set by match_async_gemm, read by plan_schedule
  std::optional<lower::ThreadPlan> thread_plan;   // set by plan_threads, read by lower_to_metal
  std::optional<schedule::Schedule> schedule;     // the caller's SCHEDULE (nullopt: omitted)
  bool bounds_checks = false;                     // METILE_DEBUG=bounds: read by the emit passes
  std::optional<schedule::SchedulePlan> schedule_plan;  // set by plan_schedule
  // A descriptor GEMM's epilogue form_descriptor_matmul left for the SIMD-group path; read by
  // lower_to_metal, which lists it among its fused epilogues when it takes that path.
  std::optional<lower::FusedEpilogue> unformed_epilogue;
  // Why form_descriptor_matmul left a dot kernel that wanted the tensor backend automatically
  // (empty: it did not); plan_schedule's backend reason says so.
  std::string tensor_backend_declined;
  lower::LoweringFacts lowering;                  // set by lower_to_metal
  lower::VectorGroups vector_groups;              // counted by group_vector_accesses
  std::optional<codegen::EmittedKernel> emitted;  // set by emit_msl and emit_cuda
};

struct Pass {
  std::string name;
  std::string description;
  std::function<ir::PassResult(ir::Kernel, PassContext&)> run;
};

// The pass of that name; UserError listing the known names when there is none.
const Pass& find_pass(const std::string& name);
// The emit pass of the target's language, emit_msl or emit_cuda; emit_ptx where the schedule
// asks for the PTX route (NotSupported on a target that is not CUDA).
std::string emit_pass_for(const target::Target& target,
                          const std::optional<schedule::Schedule>& schedule = std::nullopt);
// Every pass name, in pipeline order.
std::vector<std::string> pass_names();

}  // namespace metile
