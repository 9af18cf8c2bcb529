// The host device: buffers in guard-paged host memory, kernels run by the emulator.
#pragma once

#include "metile/runtime/device.h"
#include "metile/runtime/host/guarded_memory.h"

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

class HostDevice : public Device {
 public:
  std::string name() const override { return "host"; }
  std::string kind() const override { return "host"; }
  Buffer allocate(std::size_t bytes) override;
  using Device::allocate;
  void launch(const CompiledKernel& kernel, const Grid& grid,
              std::span<const KernelArg> args) override;
};

HostDevice& host_device();

}  // namespace metile::runtime::host
