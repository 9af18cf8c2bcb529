// A kernel ready to launch: the emitted source and the module a device built from it.
#pragma once

#include <initializer_list>
#include <memory>
#include <span>
#include <string>

#include "metile/codegen/kernel_abi.h"
#include "metile/runtime/device.h"

namespace metile::runtime {

struct CompiledKernel {
  std::string source;
  std::shared_ptr<const Module> module;
  Device* device = nullptr;  // the device that built `module`, which launches it

  const codegen::KernelABI& abi() const { return module->abi(); }
  LaunchTiming launch(const Grid& grid, std::span<const KernelArg> args,
                      const LaunchOptions& options = {}) const {
    return device->launch(*module, grid, args, options);
  }
  LaunchTiming launch(const Grid& grid, std::initializer_list<KernelArg> args,
                      const LaunchOptions& options = {}) const {
    return launch(grid, std::span<const KernelArg>(args.begin(), args.size()), options);
  }
};

// Builds `source` (emitted for device.target() with `abi`) on `device`.
CompiledKernel build_kernel(Device& device, std::string source, const codegen::KernelABI& abi);

}  // namespace metile::runtime
