// The host device: buffers in guard-paged host memory, the emitted MSL built by the host
// compiler (HostCompiler, cached) and run by the emulator. Its target is "host".
#pragma once

#include <memory>

#include "metile/runtime/device.h"
#include "metile/runtime/host/guarded_memory.h"
#include "metile/runtime/host/host_module.h"

namespace metile::runtime::host {

class HostBufferStorage : public BufferStorage {
 public:
  HostBufferStorage(Device& device, std::size_t bytes)
      : device_(device), region_(bytes, RegionKind::Buffer) {}
  Device& device() const override { return device_; }
  std::size_t size_bytes() const override { return region_.size(); }
  void* host_data() const override { return region_.data(); }
  void copy_from_host(std::size_t offset, const void* src, std::size_t bytes) override;
  void copy_to_host(std::size_t offset, void* dst, std::size_t bytes) const override;
  GuardedRegion& region() { return region_; }

 private:
  Device& device_;
  GuardedRegion region_;
};

// A kernel the host device built: its loaded shared object.
class HostKernelModule : public Module {
 public:
  HostKernelModule(codegen::KernelABI abi, std::shared_ptr<const HostModule> object)
      : Module(std::move(abi)), object_(std::move(object)) {}
  const HostModule& object() const { return *object_; }

 private:
  std::shared_ptr<const HostModule> object_;
};

class HostDevice : public Device {
 public:
  std::string name() const override { return "host"; }
  std::string kind() const override { return "host"; }
  const target::Target& target() const override;
  Buffer allocate(std::size_t bytes) override;
  using Device::allocate;
  std::shared_ptr<const Module> compile(std::string_view source,
                                        const codegen::KernelABI& abi) override;
  LaunchTiming launch(const Module& module, const Grid& grid, std::span<const KernelArg> args,
                      const LaunchOptions& options = {}) override;
};

HostDevice& host_device();

}  // namespace metile::runtime::host
