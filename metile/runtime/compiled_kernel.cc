#include "metile/runtime/compiled_kernel.h"

#include "metile/runtime/host/host_compiler.h"

namespace metile::runtime {

CompiledKernel build_host_kernel(std::string msl, codegen::KernelABI abi) {
  auto module = host::HostCompiler::shared().compile(msl, abi);
  return {std::move(msl), std::move(abi), std::move(module)};
}

}  // namespace metile::runtime
