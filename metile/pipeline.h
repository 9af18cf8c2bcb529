// The compiler, stage by stage: Tile IR in, MSL (and its ABI and report) out.
// pipeline.cc is the table of contents of meTile; read it top to bottom.
#pragma once

#include <optional>
#include <string>

#include "metile/codegen/emit.h"
#include "metile/ir/ir.h"
#include "metile/math_mode.h"
#include "metile/schedule/execution_report.h"
#include "metile/schedule/schedule.h"
#include "metile/target/target.h"

namespace metile {

struct PipelineOptions {
  const target::Target* target = nullptr;  // null: the default target (host)
  MathMode math = MathMode::Default;
  // The caller's SCHEDULE; nullopt: omitted (every control automatic).
  std::optional<schedule::Schedule> schedule;
  // Recorded bounds checks in the emitted kernel (METILE_DEBUG=bounds; codegen::EmitOptions).
  bool bounds_checks = false;
};

struct PipelineResult {
  ir::Kernel tile_ir;   // after the target-independent passes
  ir::Kernel metal_ir;  // after the Metal IR passes
  codegen::EmittedKernel emitted;
  schedule::ExecutionReport report;
};

// Runs every stage on a traced kernel. UserError for a kernel that breaks a rule,
// NotSupported for a feature not built yet, InternalError for a compiler bug.
PipelineResult compile_to_source(ir::Kernel kernel, const PipelineOptions& options = {});

}  // namespace metile
