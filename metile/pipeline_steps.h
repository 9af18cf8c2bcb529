// The bookkeeping around each pipeline step, kept out of pipeline.cc so that file reads as
// a list of stages: verify after every step, time it, note whether it changed the IR,
// write METILE_DEBUG dumps, and fill the ExecutionReport.
#pragma once

#include <chrono>
#include <functional>
#include <string>

#include "metile/codegen/emit.h"
#include "metile/ir/ir.h"
#include "metile/lower/lower.h"
#include "metile/pipeline.h"
#include "metile/schedule/execution_report.h"
#include "metile/support/debug_dump.h"
#include "metile/target/target.h"

namespace metile {

class PipelineSteps {
 public:
  PipelineSteps(const std::string& kernel_name, const target::Target& target);

  // Verifies the frontend's kernel (a failure is the user's error) and dumps it.
  void input(const ir::Kernel& kernel);
  // Runs one IR-to-IR pass, then verifies its output (a failure is a compiler bug).
  ir::Kernel run(const std::string& name, const ir::Kernel& kernel,
                 const std::function<ir::Kernel(ir::Kernel)>& pass);
  lower::ThreadPlan plan_threads(
      const ir::Kernel& kernel,
      const std::function<lower::ThreadPlan(const ir::Kernel&, const target::Target&)>& planner);
  ir::Kernel lower(
      const ir::Kernel& kernel, const lower::ThreadPlan& plan,
      const std::function<lower::LoweringResult(const ir::Kernel&, const lower::ThreadPlan&,
                                                const target::Target&)>& lowering);
  codegen::EmittedKernel emit(
      const ir::Kernel& metal,
      const std::function<codegen::EmittedKernel(const ir::Kernel&, const target::Target&)>&
          emitter);
  PipelineResult finish(ir::Kernel tile, ir::Kernel metal, codegen::EmittedKernel emitted,
                        MathMode math);

 private:
  void record(const std::string& name, ir::Dialect dialect, bool changed,
              std::chrono::steady_clock::time_point start);
  void dump(const std::string& step, const ir::Kernel& kernel);

  const target::Target& target_;
  DebugDump debug_;
  schedule::ExecutionReport report_;
};

}  // namespace metile
