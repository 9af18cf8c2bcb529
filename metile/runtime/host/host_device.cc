#include "metile/runtime/host/host_device.h"

#include <cstring>

#include "metile/runtime/compiled_kernel.h"
#include "metile/runtime/host/launch.h"
#include "metile/support/errors.h"

namespace metile::runtime::host {

void HostBufferStorage::copy_from_host(std::size_t offset, const void* src, std::size_t bytes) {
  std::memcpy(region_.data() + offset, src, bytes);
}

void HostBufferStorage::copy_to_host(std::size_t offset, void* dst, std::size_t bytes) const {
  std::memcpy(dst, region_.data() + offset, bytes);
}

Buffer HostDevice::allocate(std::size_t bytes) {
  return Buffer(std::make_shared<HostBufferStorage>(*this, bytes));
}

void HostDevice::launch(const CompiledKernel& kernel, const Grid& grid,
                        std::span<const KernelArg> args) {
  if (!kernel.host_module)
    throw UserError("kernel '" + kernel.abi.kernel_name +
                    "' was not built for the host device (build_host_kernel)");
  launch_on_host(*kernel.host_module, kernel.abi, grid, args);
}

HostDevice& host_device() {
  static HostDevice device;
  return device;
}

}  // namespace metile::runtime::host
