#include "metile/runtime/compiled_kernel.h"

namespace metile::runtime {

CompiledKernel build_kernel(Device& device, std::string source, const codegen::KernelABI& abi) {
  std::shared_ptr<const Module> module = device.compile(source, abi);
  return {std::move(source), std::move(module), &device};
}

}  // namespace metile::runtime
