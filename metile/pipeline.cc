// The table of contents of meTile: every stage, in order, named. Each step is one pass in
// the file named after it; METILE_DEBUG writes the IR after each step (step_runner.h).

#include "metile/pipeline.h"

#include "metile/codegen/emit.h"
#include "metile/ir/printer.h"
#include "metile/ir/verifier.h"
#include "metile/lower/expand_tensor_access.h"
#include "metile/lower/lower_to_metal.h"
#include "metile/lower/plan_threads.h"
#include "metile/pipeline_steps.h"
#include "metile/replay_log.h"
#include "metile/transform/apply_math_mode.h"
#include "metile/transform/canonicalize.h"
#include "metile/transform/cse.h"
#include "metile/transform/dce.h"

namespace metile {

PipelineResult compile_to_source(ir::Kernel kernel, const PipelineOptions& options) {
  const target::Target& target = options.target ? *options.target : target::default_target();
  PipelineSteps steps(kernel.name, target);
  const std::string replay = replay_dir();
  const std::string input_text = replay.empty() ? "" : ir::print(kernel);

  // 1. The traced kernel must be valid Tile IR; a frontend bug shows up here, not later.
  steps.input(kernel);

  // 2. Target-independent Tile IR passes.
  kernel = steps.run("apply_math_mode", kernel, [&](ir::Kernel k) {
    return transform::apply_math_mode(std::move(k), options.math == MathMode::Strict,
                                      options.math == MathMode::Relaxed);
  });
  kernel = steps.run("canonicalize", kernel, transform::canonicalize);
  kernel = steps.run("expand_tensor_access", kernel, lower::expand_tensor_access);
  kernel = steps.run("cse", kernel, transform::eliminate_common_subexpressions);
  kernel = steps.run("dce", kernel, transform::eliminate_dead_code);

  // 3. Geometry: how many threads share a tile.
  lower::ThreadPlan plan = steps.plan_threads(kernel, lower::plan_threads);

  // 4. Lowering: tiles become per-thread register slots, reductions become SIMD and
  //    threadgroup collectives, threadgroup memory is allocated.
  ir::Kernel metal = steps.lower(kernel, plan, lower::lower_to_metal);

  // 5. Metal IR passes.
  metal = steps.run("canonicalize", metal, transform::canonicalize);
  metal = steps.run("cse", metal, transform::eliminate_common_subexpressions);
  metal = steps.run("dce", metal, transform::eliminate_dead_code);

  // 6. Emit Metal Shading Language: a body function, an entry wrapper, and the ABI.
  codegen::EmittedKernel emitted = steps.emit(metal, codegen::emit);

  // 7. With METILE_REPLAY_DIR set, record the input and output for a replay diff.
  if (!replay.empty())
    write_replay_entry(replay, {kernel.name, target.name, math_mode_name(options.math), input_text,
                                emitted.source});

  return steps.finish(std::move(kernel), std::move(metal), std::move(emitted), options.math);
}

}  // namespace metile
