#include "metile/pipeline_steps.h"

#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/support/errors.h"

namespace metile {

namespace {
std::string dialect_label(ir::Dialect d) {
  return d == ir::Dialect::Tile ? "tile" : "metal";
}
}  // namespace

PipelineSteps::PipelineSteps(const std::string& kernel_name, const target::Target& target)
    : target_(target), debug_(kernel_name) {
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

ir::Kernel PipelineSteps::run(const std::string& name, const ir::Kernel& kernel,
                              const std::function<ir::Kernel(ir::Kernel)>& pass) {
  auto start = std::chrono::steady_clock::now();
  const std::string before = ir::print(kernel);
  ir::Kernel out = pass(kernel);
  ir::verify_or_throw(out, name);
  const bool changed = ir::print(out) != before;
  record(name, out.dialect, changed, start);
  dump(name, out);
  return out;
}

lower::ThreadPlan PipelineSteps::plan_threads(
    const ir::Kernel& kernel,
    const std::function<lower::ThreadPlan(const ir::Kernel&, const target::Target&)>& planner) {
  auto start = std::chrono::steady_clock::now();
  lower::ThreadPlan plan = planner(kernel, target_);
  record("plan_threads", kernel.dialect, false, start);
  report_.threads_per_threadgroup = {plan.threads_per_threadgroup, 1, 1};
  report_.thread_plan_reason = plan.reason;
  return plan;
}

ir::Kernel PipelineSteps::lower(
    const ir::Kernel& kernel, const lower::ThreadPlan& plan,
    const std::function<lower::LoweringResult(const ir::Kernel&, const lower::ThreadPlan&,
                                              const target::Target&)>& lowering) {
  auto start = std::chrono::steady_clock::now();
  lower::LoweringResult result = lowering(kernel, plan, target_);
  ir::verify_or_throw(result.metal, "lower_to_metal");
  record("lower_to_metal", ir::Dialect::Metal, true, start);
  dump("lower_to_metal", result.metal);
  for (const lower::Allocation& a : result.allocations)
    report_.allocations.push_back(
        {a.purpose, a.offset, a.bytes, std::string(ir::dtype_name(a.dtype)), a.elements});
  for (const lower::LoopInfo& l : result.loops)
    report_.loops.push_back({l.loop, l.tile_elements, l.elements_per_thread});
  report_.value_layouts = result.value_layouts;
  return std::move(result.metal);
}

codegen::EmittedKernel PipelineSteps::emit(
    const ir::Kernel& metal,
    const std::function<codegen::EmittedKernel(const ir::Kernel&, const target::Target&)>&
        emitter) {
  auto start = std::chrono::steady_clock::now();
  codegen::EmittedKernel emitted = emitter(metal, target_);
  auto elapsed = std::chrono::steady_clock::now() - start;
  report_.passes.push_back(
      {"emit_msl", "msl", true, std::chrono::duration<double, std::milli>(elapsed).count()});
  debug_.write(DumpKind::MSL, "emit_msl", emitted.source);
  return emitted;
}

PipelineResult PipelineSteps::finish(ir::Kernel tile, ir::Kernel metal,
                                     codegen::EmittedKernel emitted, MathMode math) {
  report_.threadgroup_bytes = emitted.abi.threadgroup_bytes;
  report_.threads_per_threadgroup = emitted.abi.threads_per_threadgroup;
  report_.grid_rule = emitted.abi.grid_rule;
  report_.source_bytes = static_cast<int64_t>(emitted.source.size());
  report_.math_mode = math == MathMode::Strict    ? "strict"
                      : math == MathMode::Relaxed ? "relaxed"
                                                  : "default";
  if (debug_.enabled(DumpKind::Schedule))
    debug_.write(DumpKind::Schedule, "execution_report", report_.str());
  return {std::move(tile), std::move(metal), std::move(emitted), std::move(report_)};
}

}  // namespace metile
