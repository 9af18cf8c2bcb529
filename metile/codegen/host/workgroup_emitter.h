// The host emulator's second execution strategy (docs/host_emulator.md, "Execution
// strategies"): a kernel whose barriers and SIMD collectives all sit in control flow that is
// uniform across the threadgroup is also emitted as a work-group function, as PoCL does.
// Each barrier-free region becomes a loop over the threadgroup's threads, a value live across
// regions becomes a per-thread array, a barrier is the boundary between two loops, a SIMD
// collective is a loop over each SIMD group's lanes, and for/if around barriers stay outside
// the thread loops. Uniform scalar ops are computed once, before the loops, so the loops
// vectorise. A kernel that is not eligible keeps only the body function (run on fibers).
#pragma once

#include <string>
#include <vector>

#include "metile/codegen/dialect.h"
#include "metile/codegen/kernel_abi.h"
#include "metile/ir/ir.h"
#include "metile/target/target.h"

namespace metile::codegen {

struct WorkgroupFunction {
  // Why the kernel runs on fibers; empty when it is eligible.
  std::string ineligible_because;
  // The marker comment, then the function <kernel>_workgroup (params, tg_mem,
  // threadgroup_position_in_grid, threadgroups_per_grid) under #ifdef METILE_HOST_EMULATOR.
  std::string source;
  // Line table of `source`, counted from 1 at its first line.
  std::vector<SourceLine> source_lines;
};

// The marker the host compiler reads: "// meTile host execution: workgroup <function>" or
// "// meTile host execution: fibers (<reason>)".
inline constexpr const char* kHostExecutionMarker = "// meTile host execution: ";

WorkgroupFunction emit_workgroup_function(const ir::Kernel& metal, const CDialect& dialect,
                                          const target::Target& target, const KernelABI& abi);

}  // namespace metile::codegen
