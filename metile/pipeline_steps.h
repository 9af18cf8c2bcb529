// The bookkeeping around each pipeline step, kept out of pipeline.cc so that file reads as
// a list of stages: run the registered pass, verify after it, time it, record whether it
// changed the IR, write METILE_DEBUG dumps, and fill the ExecutionReport.
#pragma once

#include <chrono>
#include <string>

#include "metile/codegen/emit.h"
#include "metile/ir/ir.h"
#include "metile/pass_registry.h"
#include "metile/pipeline.h"
#include "metile/schedule/execution_report.h"
#include "metile/support/debug_dump.h"
#include "metile/target/target.h"

namespace metile {

class PipelineSteps {
 public:
  PipelineSteps(const std::string& kernel_name, const target::Target& target,
                const PipelineOptions& options);

  // Verifies the frontend's kernel (a failure is the user's error) and dumps it.
  void input(const ir::Kernel& kernel);
  // Runs the registered IR-to-IR pass `name`, then verifies its output (a failure is a
  // compiler bug) and dumps it.
  ir::Kernel run(const std::string& name, ir::Kernel kernel);
  // Runs the registered pass `name` that reads the kernel and leaves its finding in the
  // context (plan_threads); there is no new IR to dump.
  void analyze(const std::string& name, const ir::Kernel& kernel);
  // Runs the registered emit pass `name` (emit_msl, emit_cuda) and dumps its source.
  codegen::EmittedKernel emit(const std::string& name, const ir::Kernel& metal);
  PipelineResult finish(ir::Kernel tile, ir::Kernel metal, codegen::EmittedKernel emitted);

 private:
  void record(const std::string& name, ir::Dialect dialect, bool changed,
              std::chrono::steady_clock::time_point start);
  void dump(const std::string& step, const ir::Kernel& kernel);

  PassContext context_;
  DebugDump debug_;
  schedule::ExecutionReport report_;
};

}  // namespace metile
