// A kernel ready to launch: the emitted MSL, its ABI, and what each runtime built from
// it. The compiler pipeline produces it (build_host_kernel for the host target); any
// device launches it.
#pragma once

#include <initializer_list>
#include <memory>
#include <span>
#include <string>

#include "metile/codegen/kernel_abi.h"
#include "metile/runtime/device.h"

namespace metile::runtime {

namespace host {
class HostModule;
}

struct CompiledKernel {
  std::string msl;
  codegen::KernelABI abi;
  std::shared_ptr<const host::HostModule> host_module;  // null until built for the host

  void launch(const Grid& grid, std::span<const KernelArg> args,
              Device& device = default_device()) const {
    device.launch(*this, grid, args);
  }
  void launch(const Grid& grid, std::initializer_list<KernelArg> args,
              Device& device = default_device()) const {
    device.launch(*this, grid, std::span<const KernelArg>(args.begin(), args.size()));
  }
};

// Compiles `msl` for the host emulator (through the shared HostCompiler and its caches).
CompiledKernel build_host_kernel(std::string msl, codegen::KernelABI abi);

}  // namespace metile::runtime
