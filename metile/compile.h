// The user-facing compile/launch API: compile(kernel, options) runs the pipeline and
// prepares the kernel for a device; CompiledKernel::launch runs it.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "metile/check_offset_ranges.h"
#include "metile/codegen/kernel_abi.h"
#include "metile/dsl/trace.h"
#include "metile/ir/ir.h"
#include "metile/pipeline.h"
#include "metile/runtime/buffer.h"
#include "metile/runtime/compiled_kernel.h"
#include "metile/runtime/device.h"
#include "metile/schedule/execution_report.h"
#include "metile/schedule/schedule.h"
#include "metile/schedule/schedule_plan.h"

namespace metile {

// A buffer argument in memory the caller owns (a numpy array, a std::vector): its bytes are
// copied into a device buffer before the launch and back afterwards for parameters the
// kernel may write, so the caller's memory is updated in place.
struct BufferView {
  void* data = nullptr;
  int64_t bytes = 0;
  ir::DType dtype = ir::DType::f32;
};

// One launch argument per kernel parameter, in the kernel's parameter order: caller memory,
// a device Buffer (used directly, no copies), or a scalar (converted to the parameter's
// dtype when it fits; UserError otherwise).
using KernelArg = std::variant<BufferView, runtime::Buffer, int64_t, double>;

struct CompileOptions {
  // A runtime::get_device name; empty: runtime::default_device(). The device's Target is
  // the one the pipeline compiles for.
  std::string device;
  MathMode math = MathMode::Default;
  // The kernel's execution requirements (metile::Schedule); nullopt: every control
  // automatic. plan_schedule rejects a requirement it cannot meet.
  std::optional<Schedule> schedule;
  // Recorded bounds checks (docs/reliability.md, "Out-of-bounds accesses"): every device access
  // checked against its buffer's extent, the launch raising runtime::KernelFaultError for the
  // first one outside. nullopt: METILE_DEBUG decides (`bounds` in its list). The host device
  // checks every access in any case; NotSupported on an Apple GPU.
  std::optional<bool> bounds_checks;
};

class CompiledKernel {
 public:
  CompiledKernel(PipelineResult result, runtime::CompiledKernel device_kernel)
      : result_(std::move(result)),
        device_kernel_(std::move(device_kernel)),
        offset_range_check_(result_.tile_ir) {}
  // offset_range_check_ refers to result_'s Tile IR.
  CompiledKernel(const CompiledKernel&) = delete;
  CompiledKernel& operator=(const CompiledKernel&) = delete;

  const std::string& name() const { return result_.report.kernel; }
  const std::string& source() const { return result_.emitted.source; }
  const codegen::KernelABI& abi() const { return result_.emitted.abi; }
  const schedule::ExecutionReport& report() const { return result_.report; }
  // plan_schedule's decisions and reasons (also the report's "schedule_plan").
  const schedule::SchedulePlan& schedule_plan() const { return result_.report.schedule_plan; }
  // The execution report as formatted JSON.
  std::string explain() const { return result_.report.str(); }
  const ir::Kernel& tile_ir() const { return result_.tile_ir; }
  const ir::Kernel& metal_ir() const { return result_.metal_ir; }
  runtime::Device& device() const { return *device_kernel_.device; }
  // The device's build of source() (what launch() runs).
  const runtime::CompiledKernel& device_kernel() const { return device_kernel_; }

  // Launches grid[0] x grid[1] x grid[2] programs (one threadgroup each) on the device it
  // was compiled for (on options.stream, for a device with streams), waits (unless
  // options.wait is false and no argument is caller memory, which is copied back), and
  // returns how long the device took. UserError when the arguments do not match the ABI
  // (count, kinds, dtypes, sizes) or when an address offset would wrap for this grid and these
  // arguments (check_offset_ranges.h); OutOfResources when the grid exceeds the Target's.
  runtime::LaunchTiming launch(std::array<int64_t, 3> grid, std::span<const KernelArg> args,
                               const runtime::LaunchOptions& options = {}) const;

 private:
  // The integer scalar arguments by the Tile IR parameter they bind (the offset range check).
  std::map<ir::ValueId, int64_t> integer_scalars(std::span<const KernelArg> args) const;

  PipelineResult result_;
  runtime::CompiledKernel device_kernel_;
  OffsetRangeCheck offset_range_check_;  // its analysis done once, not per launch
};

// CompiledKernel::launch for a device's build of any emitted source and its ABI
// (runtime::build_kernel), e.g. a source another meTile tree emitted.
runtime::LaunchTiming launch(const runtime::CompiledKernel& kernel, std::array<int64_t, 3> grid,
                             std::span<const KernelArg> args,
                             const runtime::LaunchOptions& options = {});

// Compiles a traced Tile IR kernel for a device, emitting for the device's Target. Compiled
// kernels are cached in process (by device, Target, math mode and Tile IR) and the device
// caches what it builds on disk, so compiling the same kernel twice is cheap.
std::shared_ptr<const CompiledKernel> compile(ir::Kernel kernel,
                                              const CompileOptions& options = {});

// Traces a metile::dsl kernel function specialised on `constexprs`, then compiles it:
//   auto add = metile::compile("vector_add", vector_add, {{"BLOCK", 256}});
std::shared_ptr<const CompiledKernel> compile(const std::string& name,
                                              const dsl::KernelFunction& kernel,
                                              const dsl::Constexprs& constexprs = {},
                                              const CompileOptions& options = {});

}  // namespace metile
