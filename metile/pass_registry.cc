#include "metile/pass_registry.h"

#include <algorithm>

#include "metile/check_resources.h"
#include "metile/lower/dot_operand_vectors.h"
#include "metile/lower/expand_tensor_access.h"
#include "metile/lower/form_descriptor_matmul.h"
#include "metile/lower/group_vector_accesses.h"
#include "metile/lower/lower_dot_wgmma.h"
#include "metile/lower/lower_to_metal.h"
#include "metile/lower/plan_axis_slices.h"
#include "metile/lower/plan_threads.h"
#include "metile/lower/verify_async_pipeline.h"
#include "metile/lower/verify_scratch.h"
#include "metile/lower/verify_software_pipeline.h"
#include "metile/lower/verify_vector_accesses.h"
#include "metile/schedule/plan_schedule.h"
#include "metile/support/errors.h"
#include "metile/transform/apply_math_mode.h"
#include "metile/transform/canonicalize.h"
#include "metile/transform/check_device_tiles.h"
#include "metile/transform/check_matrix_barriers.h"
#include "metile/transform/check_ownership.h"
#include "metile/transform/cse.h"
#include "metile/transform/dce.h"
#include "metile/transform/derive_induction_values.h"
#include "metile/transform/eliminate_redundant_conversions.h"
#include "metile/transform/merge_online_reductions.h"
#include "metile/transform/prefetch_dot_operands.h"
#include "metile/transform/rebase_carried_pointers.h"

namespace metile {

namespace {

using ir::Kernel;
using ir::PassResult;

PassResult run_apply_math_mode(Kernel k, PassContext& context) {
  return transform::apply_math_mode(std::move(k), context.math == MathMode::Strict,
                                    context.math == MathMode::Relaxed);
}

PassResult run_eliminate_redundant_conversions(Kernel k, PassContext& context) {
  transform::ConversionElimination done = transform::eliminate_redundant_conversions(std::move(k));
  context.layout_optimizations = std::move(done.optimizations);
  return std::move(done.result);
}

PassResult run_merge_online_reductions(Kernel k, PassContext& context) {
  transform::OnlineReductionMerge done = transform::merge_online_reductions(std::move(k));
  context.online_reductions = std::move(done.records);
  return std::move(done.result);
}

// On targets with mma.sync, the SIMD-group dot's operand loads go one K step ahead (two
// stages) unless the launch asked for one (num_stages=1); a kernel the tensor backend takes
// whole (wgmma_tma), or whose Schedule sets double_buffer (True: its own pipeline; False: none)
// or asks for another backend or staging, keeps its loops. The report says which happened.
PassResult run_prefetch_dot_operands(Kernel k, PassContext& context) {
  schedule::PipeliningRecord& record = context.pipelining;
  if (const auto it = k.attrs.find("pipeline_stages"); it != k.attrs.end())
    record.requested_stages = std::get<int64_t>(it->second);
  const std::optional<schedule::Schedule>& s = context.schedule;
  const bool asked_otherwise =
      s && (s->double_buffer.has_value() || s->staging != schedule::Staging::Auto ||
            (s->backend != schedule::Backend::Auto && s->backend != schedule::Backend::Simdgroup));
  if (!context.target.matrix_facilities.has(target::MatrixFacility::MmaSync))
    record.reason = "target " + context.target.name + " has no mma.sync: K loops keep one stage";
  else if (context.async_gemm && context.async_gemm->matched() && context.async_gemm->wgmma_tile())
    record.reason = "the tensor backend (wgmma_tma) pipelines the kernel itself";
  else if (asked_otherwise)
    record.reason = "the Schedule sets double_buffer, a backend or a staging";
  else if (record.requested_stages == 1)
    record.reason = "num_stages=1: K loops keep one stage";
  if (!record.reason.empty()) return {std::move(k), false};
  const lower::ThreadPlan lanes = lower::plan_threads(k, context.target);
  // wgmma_staged copies its dots' b tiles a step ahead through shared memory itself (its
  // prefetch ring); a tile carried in registers would hide the load it copies from.
  if (context.target.matrix_facilities.has(target::MatrixFacility::Wgmma) &&
      schedule::plan_schedule(k, context.target, lanes, context.schedule,
                              context.async_gemm ? &*context.async_gemm : nullptr,
                              context.tensor_backend_declined)
              .strategy == schedule::MatrixStrategy::WgmmaStaged) {
    record.reason =
        "wgmma_staged copies the dots' b tiles one step ahead through shared memory (its "
        "prefetch ring): no operand is carried in registers";
    return {std::move(k), false};
  }
  // Half of a thread's 255 registers for the accumulators and the prefetched tiles.
  constexpr int64_t kRegisterBudget = 128;
  const int64_t threads = lanes.threads_per_threadgroup;
  // Where copies are asynchronous, the canonical K loop is staged in shared memory instead.
  const bool staged = context.target.has_async_copy;
  transform::Prefetching done =
      transform::prefetch_dot_operands(std::move(k), threads, kRegisterBudget, staged);
  record.prefetched_loops = std::move(done.loops);
  const std::string staging =
      staged ? "K loops that carry only a dot accumulator are staged through shared memory by "
               "asynchronous copies (schedule_plan.double_buffer, execution_report.pipelines); "
               "of the other K loops, "
             : "";
  record.reason =
      staging + (record.prefetched_loops.empty()
                     ? "none of dot operand loads fits the register budget (" +
                           std::to_string(kRegisterBudget) + " per thread)"
                     : "those whose dot operand loads fit the register budget load them one K step "
                       "ahead (two stages, in registers)" +
                           std::string(!staged && record.requested_stages > 2
                                           ? "; deeper pipelines are not built"
                                           : ""));
  return std::move(done.result);
}

PassResult run_peel_complete_iterations(Kernel k, PassContext& context) {
  transform::Peeling done = transform::peel_complete_iterations(std::move(k));
  context.peeled_loops = std::move(done.loops);
  return std::move(done.result);
}

PassResult run_check_ownership(Kernel k, PassContext& context) {
  context.ownership = transform::check_ownership(k);
  return {std::move(k), false};
}

PassResult run_form_descriptor_matmul(Kernel k, PassContext& context) {
  lower::DescriptorMatmulForming done =
      lower::form_descriptor_matmul(std::move(k), context.target, context.schedule);
  context.unformed_epilogue = std::move(done.unformed_epilogue);
  context.tensor_backend_declined = std::move(done.declined);
  return std::move(done.result);
}

PassResult run_match_async_gemm(Kernel k, PassContext& context) {
  context.async_gemm = lower::match_async_gemm(k);
  return {std::move(k), false};
}

// Schedule(vector_width=4) on the SIMD-group GEMM: vectorized operand loads are required.
bool required_operand_vectors(const PassContext& context) {
  return context.schedule_plan && context.schedule_plan->vector_width == 4 &&
         context.schedule_plan->backend == schedule::Backend::Simdgroup;
}

// On mma.sync's fragments (16-bit dots on the SIMD-group backend, no vector width asked for),
// operand tiles load in 16-byte runs where their addresses allow it.
bool automatic_operand_vectors(const Kernel& k, const PassContext& context) {
  const schedule::SchedulePlan& s = *context.schedule_plan;
  if (s.backend != schedule::Backend::Simdgroup || s.vector_width != 0 ||
      s.staging == schedule::Staging::Device ||
      s.strategy == schedule::MatrixStrategy::WgmmaStaged ||
      !context.target.matrix_facilities.has(target::MatrixFacility::MmaSync))
    return false;
  bool sixteen_bit = false;
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::Dot || !k.type(op.operands[0]).is_tile()) return;
    const ir::DType t = k.type(op.operands[0]).dtype;
    sixteen_bit = sixteen_bit || t == ir::DType::f16 || t == ir::DType::bf16;
  });
  return sixteen_bit;
}

// Whether the kernel has a dot of 2-D tiles, which the whole-GEMM backends tile over their
// SIMD groups.
bool has_tile_dot(const Kernel& k) {
  bool found = false;
  ir::walk(k.body, [&](const ir::Op& op) {
    found = found || (op.kind == ir::OpKind::Dot && k.type(op.operands[0]).is_tile());
  });
  return found;
}

// Schedule(num_simdgroups=N) on a GEMM kernel (a dot of tiles) that declares no lane count of
// its own runs it on N SIMD groups (seed 002's checked matmul), as if it declared num_threads
// = N * SIMD width; other kernels run on their traced lanes, which N must match.
PassResult run_plan_threads(Kernel k, PassContext& context) {
  const std::optional<int> groups =
      context.schedule ? context.schedule->num_simdgroups : std::nullopt;
  if (!groups || k.attrs.count("num_threads") || !has_tile_dot(k)) {
    context.thread_plan = lower::plan_threads(k, context.target);
    return {std::move(k), false};
  }
  Kernel sized = k;
  sized.attrs["num_threads"] = int64_t{*groups} * context.target.simd_width;
  context.thread_plan = lower::plan_threads(sized, context.target);
  context.thread_plan->reason =
      "Schedule(num_simdgroups=" + std::to_string(*groups) + "): " + context.thread_plan->reason;
  return {std::move(k), false};
}

// wgmma's register layout for the [rows, columns] tiles of every dot's accumulator and, where
// `a_too` (wgmma_staged: a from registers), of its a operand.
void plan_wgmma_accumulator(const Kernel& k, lower::ThreadPlan& plan, bool a_too) {
  const auto give = [&](int64_t rows, int64_t columns) {
    const ir::ThreadLayout layout =
        lower::wgmma_accumulator_layout(rows, columns, plan.threads_per_threadgroup / 128);
    std::erase_if(plan.layouts,
                  [&](const ir::ThreadLayout& l) { return l.size() == layout.size(); });
    plan.layouts.insert(plan.layouts.begin(), layout);
  };
  ir::walk(k.body, [&](const ir::Op& op) {
    if (op.kind != ir::OpKind::Dot) return;
    const ir::Type& acc = k.type(op.operands[2]);
    give(acc.shape[0], acc.shape[1]);
    if (a_too) give(k.type(op.operands[0]).shape[0], k.type(op.operands[0]).shape[1]);
  });
}

PassResult run_plan_schedule(Kernel k, PassContext& context) {
  if (!context.thread_plan)
    throw UserError("plan_schedule: kernel '" + k.name +
                    "' has no lane geometry; run plan_threads before plan_schedule");
  context.schedule_plan = schedule::plan_schedule(
      k, context.target, *context.thread_plan, context.schedule,
      context.async_gemm ? &*context.async_gemm : nullptr, context.tensor_backend_declined);
  // Dots take matrix fragments exactly when the plan's backend is simdgroup.
  const schedule::MatrixStrategy strategy = context.schedule_plan->strategy;
  context.thread_plan->dot_matrix_fragments =
      context.schedule_plan->backend == schedule::Backend::Simdgroup &&
      strategy != schedule::MatrixStrategy::WgmmaStaged;
  if (required_operand_vectors(context))
    lower::plan_dot_operand_vectors(k, *context.thread_plan, 4, true);
  else if (automatic_operand_vectors(k, context))
    lower::plan_dot_operand_vectors(k, *context.thread_plan,
                                    lower::group_width(context.target, ir::DType::f16), false);
  // A K loop on wgmma keeps its accumulator in wgmma's registers, and the epilogue's tiles of
  // that size take the same layout, so nothing moves between threads after the loop.
  if (strategy == schedule::MatrixStrategy::WgmmaPipelined ||
      strategy == schedule::MatrixStrategy::WgmmaStaged)
    plan_wgmma_accumulator(k, *context.thread_plan,
                           strategy == schedule::MatrixStrategy::WgmmaStaged);
  // Last, once every source layout is known: axis reductions keep their rows' threads.
  lower::plan_axis_slices(k, *context.thread_plan, context.target.simd_width);
  return {std::move(k), false};
}

PassResult run_check_resources(Kernel k, PassContext& context) {
  if (!context.thread_plan)
    throw UserError("check_resources: kernel '" + k.name +
                    "' has no thread plan; run plan_threads before check_resources");
  check_resources(k, *context.thread_plan, context.target);
  return {std::move(k), false};
}

PassResult run_lower_to_metal(Kernel k, PassContext& context) {
  if (!context.thread_plan)
    throw UserError("lower_to_metal: kernel '" + k.name +
                    "' has no thread plan; run plan_threads before lower_to_metal");
  // metile-opt may lower without planning a schedule: the automatic plan is the one.
  if (!context.schedule_plan)
    context.schedule_plan =
        schedule::plan_schedule(k, context.target, *context.thread_plan, std::nullopt);
  lower::LoweringResult lowered = lower::lower_to_metal(
      k, *context.thread_plan, context.target, *context.schedule_plan, context.unformed_epilogue);
  Kernel metal = std::move(lowered.metal);
  context.lowering = std::move(static_cast<lower::LoweringFacts&>(lowered));
  return {std::move(metal), true};
}

PassResult run_verify_async_pipeline(Kernel k, PassContext&) {
  lower::verify_async_pipeline(k);
  return {std::move(k), false};
}

PassResult run_verify_scratch(Kernel k, PassContext& context) {
  lower::verify_scratch(k, context.target.simd_width);
  return {std::move(k), false};
}

// The pipelines' verified rules go into lowering's records (none when run on IR text).
PassResult run_verify_software_pipeline(Kernel k, PassContext& context) {
  std::vector<std::vector<std::string>> verified =
      lower::verify_software_pipeline(k, context.target);
  std::vector<schedule::SoftwarePipeline>& records = context.lowering.pipelines;
  if (!records.empty() && records.size() != verified.size())
    throw InternalError("verify_software_pipeline: lowering recorded " +
                        std::to_string(records.size()) + " pipelines, the Metal IR holds " +
                        std::to_string(verified.size()));
  for (size_t i = 0; i < records.size(); ++i) records[i].verified = std::move(verified[i]);
  return {std::move(k), false};
}

// The plan's vector_width 1 turns grouping off (plan_schedule rejects a forced 4).
PassResult run_group_vector_accesses(Kernel k, PassContext& context) {
  if (context.schedule_plan && context.schedule_plan->vector_width == 1)
    return {std::move(k), false};
  return lower::group_vector_accesses(std::move(k), context.target, context.vector_groups);
}

PassResult run_verify_vector_accesses(Kernel k, PassContext& context) {
  lower::verify_vector_accesses(k, context.target);
  if (required_operand_vectors(context)) lower::require_grouped_loads(k);
  return {std::move(k), false};
}

// The emit passes: each checks that the target takes its language, so a pass list cannot
// silently emit the other one.
PassResult run_emit(Kernel k, PassContext& context, target::Language language,
                    const std::string& pass, const std::string& language_name) {
  if (context.target.language != language)
    throw UserError(pass + ": target " + context.target.name + " does not take " + language_name);
  context.emitted = codegen::emit(k, context.target, codegen::RenderRoute::Source,
                                  {.bounds_checks = context.bounds_checks});
  return {std::move(k), false};
}

PassResult run_emit_msl(Kernel k, PassContext& context) {
  return run_emit(std::move(k), context, target::Language::MSL, "emit_msl",
                  "Metal Shading Language");
}

PassResult run_emit_cuda(Kernel k, PassContext& context) {
  return run_emit(std::move(k), context, target::Language::CUDA, "emit_cuda", "CUDA C++");
}

PassResult run_emit_ptx(Kernel k, PassContext& context) {
  if (context.target.language != target::Language::CUDA)
    throw UserError("emit_ptx: target " + context.target.name + " does not take PTX");
  context.emitted = codegen::emit(k, context.target, codegen::RenderRoute::Ptx,
                                  {.bounds_checks = context.bounds_checks});
  return {std::move(k), false};
}

// In pipeline order; the Tile IR passes that also run on Metal IR appear once.
const std::vector<Pass>& registry() {
  static const std::vector<Pass> passes = {
      {"verify", "checks the kernel against its dialect's rules and changes nothing",
       [](Kernel k, PassContext&) {
         return PassResult{std::move(k), false};
       }},
      {"apply_math_mode",
       "applies the math mode (--math): strict drops every fast flag, relaxed marks every "
       "transcendental fast",
       run_apply_math_mode},
      {"canonicalize",
       "folds constants, applies exact algebraic identities, picks constant branches",
       [](Kernel k, PassContext&) { return transform::canonicalize(std::move(k)); }},
      {"rebase_carried_pointers",
       "carries a loop's pointer tile that advances by a uniform step as its initial tile plus "
       "a scalar offset",
       [](Kernel k, PassContext&) { return transform::rebase_carried_pointers(std::move(k)); }},
      {"form_descriptor_matmul",
       "turns a descriptor GEMM's K loop, pointwise epilogue and store into one "
       "descriptor_matmul where the plan will take the target's tensor backend",
       run_form_descriptor_matmul},
      {"match_async_gemm",
       "finds whether the kernel (descriptors not yet expanded) is the canonical descriptor "
       "GEMM that sm90's wgmma_tma strategy lowers",
       run_match_async_gemm},
      {"expand_tensor_access",
       "rewrites tensor descriptor loads/stores as bounds-masked pointer accesses",
       [](Kernel k, PassContext&) { return lower::expand_tensor_access(std::move(k)); }},
      {"cse", "replaces pure ops by identical earlier ones",
       [](Kernel k, PassContext&) {
         return transform::eliminate_common_subexpressions(std::move(k));
       }},
      {"merge_online_reductions",
       "merges a running-maximum loop and the sum-of-exp(x - max) loop after it into one online "
       "pass, licensed by the verified online softmax law",
       run_merge_online_reductions},
      {"dce", "removes ops whose results are unused and that have no effects",
       [](Kernel k, PassContext&) { return transform::eliminate_dead_code(std::move(k)); }},
      {"derive_induction_values",
       "computes a loop-carried scalar that advances by a loop-invariant step from the "
       "induction variable instead of carrying it",
       [](Kernel k, PassContext&) { return transform::derive_induction_values(std::move(k)); }},
      {"prefetch_dot_operands",
       "on mma.sync targets, issues a K loop's dot operand loads one iteration ahead",
       run_prefetch_dot_operands},
      {"peel_complete_iterations",
       "splits a zero-start loop's iterations whose device tiles are provably complete from a "
       "guarded remainder",
       run_peel_complete_iterations},
      {"eliminate_redundant_conversions",
       "checks ownership, then removes identity layout conversions, cancels inverse pairs and "
       "composes chains",
       run_eliminate_redundant_conversions},
      {"check_ownership",
       "computes which thread owns each tile element (thread layouts) and checks the "
       "ownership rules",
       run_check_ownership},
      {"check_matrix_barriers",
       "checks that barriers order the scalar and matrix fragment accesses of each shared "
       "allocation",
       [](Kernel k, PassContext&) {
         transform::check_matrix_barriers(k);
         return PassResult{std::move(k), false};
       }},
      {"check_device_tiles",
       "checks device tiles' scratch allocations and that no device buffer matrix operations "
       "access is both read and written",
       [](Kernel k, PassContext&) {
         transform::check_device_tiles(k);
         return PassResult{std::move(k), false};
       }},
      {"plan_threads", "picks the threads per threadgroup for the target (--target)",
       run_plan_threads},
      {"plan_schedule",
       "picks the backend, SIMD-group geometry, staging, vector width and buffering (with "
       "reasons) and checks the Schedule's requirements against the kernel and the target",
       run_plan_schedule},
      {"check_resources",
       "checks tile elements, registers per thread and threads per threadgroup against the "
       "target's limits (OutOfResources)",
       run_check_resources},
      {"lower_to_metal", "lowers Tile IR to Metal IR with plan_threads' plan", run_lower_to_metal},
      {"verify_scratch",
       "checks every exchange and reduction through threadgroup scratch (Metal IR)",
       run_verify_scratch},
      {"verify_software_pipeline",
       "checks every two-stage software pipeline's slots, copies, barriers and rotation "
       "(Metal IR)",
       run_verify_software_pipeline},
      {"verify_async_pipeline",
       "checks the mbarrier ring's slot ownership, phase parity, publication and release "
       "(Metal IR)",
       run_verify_async_pipeline},
      {"group_vector_accesses",
       "groups four consecutive f16/bf16/f32 accesses of a thread into one guarded packed vector "
       "access",
       run_group_vector_accesses},
      {"verify_vector_accesses",
       "checks the packed vector accesses' types, geometry, extracts and guards",
       run_verify_vector_accesses},
      {"emit_msl", "emits the Metal Shading Language source of a Metal IR kernel", run_emit_msl},
      {"emit_cuda", "emits the CUDA C++ source of a Metal IR kernel", run_emit_cuda},
      {"emit_ptx", "emits the PTX of a Metal IR kernel (the PTX route, Schedule(route=\"ptx\"))",
       run_emit_ptx},
  };
  return passes;
}

}  // namespace

const Pass& find_pass(const std::string& name) {
  // emit-msl and emit_msl name the same pass: the issue tracker and shell habits use dashes.
  std::string spelled = name;
  std::replace(spelled.begin(), spelled.end(), '-', '_');
  for (const Pass& pass : registry())
    if (pass.name == spelled) return pass;
  std::string known;
  for (const Pass& pass : registry()) known += (known.empty() ? "" : ", ") + pass.name;
  throw UserError("unknown pass '" + name + "'; known passes: " + known);
}

std::string emit_pass_for(const target::Target& target,
                          const std::optional<schedule::Schedule>& schedule) {
  if (schedule && schedule->route == schedule::Route::Ptx) {
    if (target.language != target::Language::CUDA)
      throw NotSupported("Schedule(route=\"ptx\"): target " + target.name +
                         " is not an NVIDIA target; the PTX route needs a CUDA target (sm90)");
    return "emit_ptx";
  }
  switch (target.language) {
    case target::Language::MSL:
      return "emit_msl";
    case target::Language::CUDA:
      return "emit_cuda";
  }
  throw InternalError("emit_pass_for: target " + target.name + " has an unknown language");
}

std::vector<std::string> pass_names() {
  std::vector<std::string> names;
  for (const Pass& pass : registry()) names.push_back(pass.name);
  return names;
}

}  // namespace metile
