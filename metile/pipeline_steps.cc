#include "metile/pipeline_steps.h"

#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/schedule/schedule_debug.h"
#include "metile/support/errors.h"

namespace metile {

namespace {
std::string dialect_label(ir::Dialect d) {
  return d == ir::Dialect::Tile ? "tile" : "metal";
}
}  // namespace

PipelineSteps::PipelineSteps(const std::string& kernel_name, const target::Target& target,
                             const PipelineOptions& options)
    : context_(target, options.math), debug_(kernel_name) {
  context_.schedule = options.schedule;
  context_.bounds_checks = options.bounds_checks;
  report_.kernel = kernel_name;
  report_.target = target.name;
}

void PipelineSteps::dump(const std::string& step, const ir::Kernel& kernel) {
  DumpKind kind = kernel.dialect == ir::Dialect::Tile ? DumpKind::TileIR : DumpKind::MetalIR;
  if (debug_.enabled(kind)) debug_.write(kind, step, ir::print(kernel));
}

void PipelineSteps::record(const std::string& name, ir::Dialect dialect, bool changed,
                           std::chrono::steady_clock::time_point start) {
  auto elapsed = std::chrono::steady_clock::now() - start;
  report_.passes.push_back({name, dialect_label(dialect), changed,
                            std::chrono::duration<double, std::milli>(elapsed).count()});
}

void PipelineSteps::input(const ir::Kernel& kernel) {
  auto start = std::chrono::steady_clock::now();
  ir::verify_or_throw(kernel, "");
  record("verify", kernel.dialect, false, start);
  dump("input", kernel);
}

ir::Kernel PipelineSteps::run(const std::string& name, ir::Kernel kernel) {
  auto start = std::chrono::steady_clock::now();
  ir::PassResult result = find_pass(name).run(std::move(kernel), context_);
  ir::verify_or_throw(result.kernel, name);
  record(name, result.kernel.dialect, result.changed, start);
  dump(name, result.kernel);
  return std::move(result.kernel);
}

void PipelineSteps::analyze(const std::string& name, const ir::Kernel& kernel) {
  auto start = std::chrono::steady_clock::now();
  ir::PassResult result = find_pass(name).run(kernel, context_);
  METILE_ASSERT(!result.changed, name + " is an analysis but changed the kernel");
  record(name, result.kernel.dialect, false, start);
}

codegen::EmittedKernel PipelineSteps::emit(const std::string& name, const ir::Kernel& metal) {
  auto start = std::chrono::steady_clock::now();
  find_pass(name).run(metal, context_);
  METILE_ASSERT(context_.emitted, name + " left no emitted kernel");
  auto elapsed = std::chrono::steady_clock::now() - start;
  const bool cuda = context_.target.language == target::Language::CUDA;
  report_.passes.push_back({name, cuda ? "cuda" : "msl", true,
                            std::chrono::duration<double, std::milli>(elapsed).count()});
  debug_.write(cuda ? DumpKind::CUDA : DumpKind::MSL, name, context_.emitted->source);
  return *std::move(context_.emitted);
}

PipelineResult PipelineSteps::finish(ir::Kernel tile, ir::Kernel metal,
                                     codegen::EmittedKernel emitted) {
  METILE_ASSERT(context_.thread_plan, "the pipeline finished without a thread plan");
  report_.thread_plan_reason = context_.thread_plan->reason;
  report_.ownership = context_.thread_plan->ownership;
  for (const lower::Allocation& a : context_.lowering.allocations)
    report_.allocations.push_back(
        {a.purpose, a.offset, a.bytes, std::string(ir::dtype_name(a.dtype)), a.elements});
  for (const lower::LoopInfo& l : context_.lowering.loops)
    report_.loops.push_back({l.loop, l.tile_elements, l.elements_per_thread});
  report_.value_layouts = context_.lowering.value_layouts;
  for (const lower::RegisterReduction& r : context_.lowering.register_reductions)
    report_.register_reductions.push_back(
        {r.operation, std::string(ir::dtype_name(r.dtype)), r.threads, r.registers, r.scratch});
  for (const lower::LayoutConversion& c : context_.lowering.layout_conversions)
    report_.layout_conversions.push_back({c.conversion, c.mechanism, c.scratch});
  for (const transform::LayoutOptimization& o : context_.layout_optimizations)
    report_.layout_optimizations.push_back({o.rule, o.conversion, o.proof});
  METILE_ASSERT(context_.schedule_plan, "the pipeline finished without a schedule plan");
  report_.schedule_plan = *context_.schedule_plan;
  for (const lower::Buffering& b : context_.lowering.buffering)
    report_.buffering.push_back({b.loop, b.allocation, b.stages, b.bytes});
  report_.pipelines = context_.lowering.pipelines;
  for (const lower::FusedEpilogue& e : context_.lowering.fused_epilogues)
    report_.fused_epilogues.push_back(
        {e.store, e.ops, e.scalar_parameters, e.output_conversion, e.backend});
  for (const transform::OnlineReductionRecord& r : context_.online_reductions)
    report_.discoveries.push_back(
        {"online softmax", r.loops, r.merged, r.law, r.obligations, r.cases_checked, r.detail});
  for (const transform::PeeledLoop& p : context_.peeled_loops)
    report_.peeled_loops.push_back({p.loop, p.device_tiles, p.condition});
  report_.pipelining = context_.pipelining;
  report_.grouped_loads = context_.vector_groups.loads;
  report_.grouped_stores = context_.vector_groups.stores;
  report_.grouped_copies = context_.vector_groups.copies;
  report_.threadgroup_bytes = emitted.abi.threadgroup_bytes;
  report_.threads_per_threadgroup = emitted.abi.threads_per_threadgroup;
  report_.grid_rule = emitted.abi.grid_rule;
  report_.source_bytes = static_cast<int64_t>(emitted.source.size());
  report_.math_mode = std::string(math_mode_name(context_.math));
  if (debug_.enabled(DumpKind::Schedule))
    schedule::write_schedule_debug(report_, debug_.dir(), emitted.source);
  return {std::move(tile), std::move(metal), std::move(emitted), std::move(report_)};
}

}  // namespace metile
