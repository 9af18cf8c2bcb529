#include "metile/runtime/host/host_device.h"

#include <chrono>
#include <cstring>

#include "metile/runtime/host/host_compiler.h"
#include "metile/runtime/host/launch.h"
#include "metile/support/errors.h"

namespace metile::runtime::host {

void HostBufferStorage::copy_from_host(std::size_t offset, const void* src, std::size_t bytes) {
  std::memcpy(region_.data() + offset, src, bytes);
}

void HostBufferStorage::copy_to_host(std::size_t offset, void* dst, std::size_t bytes) const {
  std::memcpy(dst, region_.data() + offset, bytes);
}

const target::Target& HostDevice::target() const {
  return target::target_by_name("host");
}

Buffer HostDevice::allocate(std::size_t bytes) {
  return Buffer(std::make_shared<HostBufferStorage>(*this, bytes));
}

std::shared_ptr<const Module> HostDevice::compile(std::string_view source,
                                                  const codegen::KernelABI& abi) {
  return std::make_shared<const HostKernelModule>(abi, HostCompiler::shared().compile(source, abi));
}

LaunchTiming HostDevice::launch(const Module& module, const Grid& grid,
                                std::span<const KernelArg> args, const LaunchOptions&) {
  const auto* host_module = dynamic_cast<const HostKernelModule*>(&module);
  if (!host_module)
    throw UserError("kernel '" + module.abi().kernel_name +
                    "' was built for another device, not for the host device");
  const auto start = std::chrono::steady_clock::now();
  launch_on_host(host_module->object(), module.abi(), grid, args);
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  return {elapsed.count()};
}

HostDevice& host_device() {
  static HostDevice device;
  return device;
}

}  // namespace metile::runtime::host
