#include "metile/compile.h"

#include <limits>
#include <map>
#include <mutex>

#include "metile/check_resources.h"
#include "metile/ir/printer.h"
#include "metile/runtime/devices.h"
#include "metile/support/debug_dump.h"
#include "metile/support/errors.h"

namespace metile {

namespace {
runtime::Grid to_grid(const std::string& kernel, std::array<int64_t, 3> grid,
                      const target::Target& target) {
  check_grid(kernel, grid, target);
  return {static_cast<uint32_t>(grid[0]), static_cast<uint32_t>(grid[1]),
          static_cast<uint32_t>(grid[2])};
}

// The runtime takes scalars in the parameter's own width; Python and C++ callers pass
// int64/double. Range and kind checks happen in runtime::bind_kernel_args.
runtime::KernelArg scalar_arg(const codegen::AbiParam& p, int64_t v) {
  if (ir::is_float(p.dtype)) return static_cast<float>(v);
  if (p.dtype == ir::DType::i64) return v;
  if (p.dtype == ir::DType::u32 && v >= 0 && v <= std::numeric_limits<uint32_t>::max())
    return static_cast<uint32_t>(v);
  if (v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max())
    return static_cast<int32_t>(v);
  return v;
}
}  // namespace

std::map<ir::ValueId, int64_t> CompiledKernel::integer_scalars(
    std::span<const KernelArg> args) const {
  std::map<ir::ValueId, int64_t> scalars;
  for (size_t i = 0; i < args.size() && i < tile_ir().params.size(); ++i) {
    const ir::Param& p = tile_ir().params[i];
    const auto* v = std::get_if<int64_t>(&args[i]);
    if (v && p.name == abi().params[i].name && ir::is_integer(tile_ir().type(p.value).dtype))
      scalars[p.value] = *v;
  }
  return scalars;
}

runtime::LaunchTiming launch(const runtime::CompiledKernel& kernel, std::array<int64_t, 3> grid,
                             std::span<const KernelArg> args,
                             const runtime::LaunchOptions& options) {
  const codegen::KernelABI& abi = kernel.abi();
  const std::string& name = abi.kernel_name;
  if (args.size() != abi.params.size())
    throw UserError("launch of " + name + ": the kernel takes " +
                    std::to_string(abi.params.size()) + " arguments, " +
                    std::to_string(args.size()) + " were given");
  runtime::Device& device = *kernel.device;
  const runtime::Grid device_grid = to_grid(name, grid, device.target());
  std::vector<runtime::Buffer> buffers(args.size());
  std::vector<runtime::KernelArg> bound;
  bound.reserve(args.size());
  bool copies_back = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const codegen::AbiParam& p = abi.params[i];
    if (const auto* view = std::get_if<BufferView>(&args[i])) {
      if (view->bytes < 0 || (view->bytes > 0 && !view->data))
        throw UserError("launch of " + name + ": argument '" + p.name + "' has no memory");
      buffers[i] = device.allocate(static_cast<size_t>(view->bytes))
                       .with_metadata(view->dtype, {view->bytes / ir::dtype_bytes(view->dtype)});
      buffers[i].copy_from_host(view->data, static_cast<size_t>(view->bytes));
      bound.emplace_back(std::ref(buffers[i]));
      copies_back = true;
    } else if (const auto* buffer = std::get_if<runtime::Buffer>(&args[i])) {
      buffers[i] = *buffer;
      bound.emplace_back(std::ref(buffers[i]));
    } else if (const auto* v = std::get_if<int64_t>(&args[i])) {
      bound.push_back(scalar_arg(p, *v));
    } else {
      bound.emplace_back(static_cast<float>(std::get<double>(args[i])));
    }
  }
  // Caller memory is copied back after the kernel, and its staging buffers freed: wait.
  runtime::LaunchOptions launch_options = options;
  launch_options.wait = options.wait || copies_back;
  const runtime::LaunchTiming timing = kernel.launch(device_grid, bound, launch_options);
  for (size_t i = 0; i < args.size(); ++i) {
    const auto* view = std::get_if<BufferView>(&args[i]);
    if (view && abi.params[i].access != "read" && view->bytes > 0)
      buffers[i].copy_to_host(view->data, static_cast<size_t>(view->bytes));
  }
  return timing;
}

runtime::LaunchTiming CompiledKernel::launch(std::array<int64_t, 3> grid,
                                             std::span<const KernelArg> args,
                                             const runtime::LaunchOptions& options) const {
  // Before anything is copied: an address offset that would wrap for this grid and these
  // scalars is refused (the free launch below has no Tile IR to check).
  offset_range_check_.check(grid, abi().threads_per_threadgroup[0], integer_scalars(args));
  return metile::launch(device_kernel_, grid, args, options);
}

std::shared_ptr<const CompiledKernel> compile(ir::Kernel kernel, const CompileOptions& options) {
  runtime::Device& device =
      options.device.empty() ? runtime::default_device() : runtime::get_device(options.device);
  const target::Target& target = device.target();
  // The host emulator checks every access anyway: its kernels are the same either way.
  const bool bounds_checks =
      (options.bounds_checks ? *options.bounds_checks : bounds_checks_requested()) &&
      target.name != "host";
  // Same device, Target, math mode, schedule, checks and Tile IR text: the same compiled kernel.
  const std::string key = device.name() + "\n" + target.name + "\n" +
                          std::string(math_mode_name(options.math)) + "\n" +
                          (options.schedule ? options.schedule->key() : "automatic") + "\n" +
                          (bounds_checks ? "bounds\n" : "") + ir::print(kernel);
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const CompiledKernel>> cache;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  PipelineOptions pipeline_options;
  pipeline_options.math = options.math;
  pipeline_options.schedule = options.schedule;
  pipeline_options.target = &target;
  pipeline_options.bounds_checks = bounds_checks;
  PipelineResult result = compile_to_source(std::move(kernel), pipeline_options);
  runtime::CompiledKernel device_kernel =
      runtime::build_kernel(device, result.emitted.source, result.emitted.abi);
  auto compiled =
      std::make_shared<const CompiledKernel>(std::move(result), std::move(device_kernel));
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(key, compiled).first->second;
}

std::shared_ptr<const CompiledKernel> compile(const std::string& name,
                                              const dsl::KernelFunction& kernel,
                                              const dsl::Constexprs& constexprs,
                                              const CompileOptions& options) {
  return compile(dsl::trace(name, kernel, constexprs), options);
}

}  // namespace metile
