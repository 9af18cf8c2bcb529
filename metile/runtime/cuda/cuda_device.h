// The cuda device: the emitted CUDA C++ compiled by NVRTC to a cubin for the GPU's
// architecture (cached on disk, cubin_cache.h), buffers in device memory, launches
// through the driver API on a caller's stream, timed with CUDA events. It is available
// when libcuda loads and reports at least one GPU; it uses GPU 0 (choose another with
// CUDA_VISIBLE_DEVICES) through its primary context, which torch shares.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "metile/runtime/cuda/driver_api.h"
#include "metile/runtime/cuda/function_limits.h"
#include "metile/runtime/device.h"

namespace metile::runtime::cuda {

class CudaDevice;

// Device memory: allocated by the device (freed with the last handle) or wrapped caller
// memory (never freed here).
class CudaBufferStorage : public BufferStorage {
 public:
  CudaBufferStorage(CudaDevice& device, CUdeviceptr address, std::size_t bytes, bool owned)
      : device_(device), address_(address), bytes_(bytes), owned_(owned) {}
  ~CudaBufferStorage() override;
  Device& device() const override;
  std::size_t size_bytes() const override { return bytes_; }
  void* host_data() const override { return nullptr; }
  void copy_from_host(std::size_t offset, const void* src, std::size_t bytes) override;
  void copy_to_host(std::size_t offset, void* dst, std::size_t bytes) const override;
  CUdeviceptr address() const { return address_; }

 private:
  CudaDevice& device_;
  CUdeviceptr address_;
  std::size_t bytes_;
  bool owned_;
};

// A kernel the cuda device built: the entry function of its cubin, which stays loaded for
// the life of the process, like the host device's objects.
class CudaKernelModule : public Module {
 public:
  CudaKernelModule(codegen::KernelABI abi, CUfunction function)
      : Module(std::move(abi)), function_(function) {}
  CUfunction function() const { return function_; }

 private:
  CUfunction function_;
};

class CudaDevice : public Device {
 public:
  // Opens GPU 0; UserError saying why when there is no usable GPU.
  CudaDevice();
  std::string name() const override { return "cuda"; }
  std::string kind() const override { return "cuda"; }
  // sm90 for compute capability 9.0; NotSupported naming any other capability.
  const target::Target& target() const override;
  Buffer allocate(std::size_t bytes) override;
  using Device::allocate;
  Buffer wrap(std::uintptr_t address, std::size_t bytes) override;
  std::shared_ptr<const Module> compile(std::string_view source,
                                        const codegen::KernelABI& abi) override;
  LaunchTiming launch(const Module& module, const Grid& grid, std::span<const KernelArg> args,
                      const LaunchOptions& options = {}) override;

  // "NVIDIA H200 (compute capability 9.0)"
  std::string description() const;
  // Throws the error of a failed driver call (`kernel` names the kernel involved, if any);
  // a sticky error marks the context unusable, and every later call says so.
  void check(CUresult result, const char* call, std::string_view kernel = {}) const;
  // Binds the device's context to the calling thread (the driver's current context is per
  // thread); throws when an earlier kernel fault left it unusable.
  void make_current() const;
  const DriverApi& api() const { return *api_; }

 private:
  // What the driver allows the compiled function (threads per block, static shared memory).
  FunctionLimits function_limits(CUfunction function, const std::string& kernel) const;

  const DriverApi* api_ = nullptr;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  int major_ = 0, minor_ = 0;
  int max_shared_optin_ = 0;
  std::string gpu_name_;
  mutable std::mutex fault_mutex_;
  mutable std::string fault_;  // the sticky error that made the context unusable
};

// The reason the cuda device is unavailable here ("" when it is available): libcuda does
// not load, cuInit fails, or there is no GPU.
std::string cuda_unavailable_reason();
// The process-wide cuda device; UserError with cuda_unavailable_reason() when there is none.
CudaDevice& cuda_device();

}  // namespace metile::runtime::cuda
