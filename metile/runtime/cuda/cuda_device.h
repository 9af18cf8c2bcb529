// The cuda device: the emitted CUDA C++ compiled by NVRTC to a cubin for the GPU's
// architecture (cached on disk, cubin_cache.h), buffers in device memory, launches
// through the driver API on a caller's stream: queued without waiting, or waited for and
// timed with CUDA events (LaunchOptions::wait). It is available when libcuda loads and
// reports at least one GPU; it uses GPU 0 (choose another with CUDA_VISIBLE_DEVICES)
// through its primary context, which torch shares.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

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

// A loaded cubin, unloaded (cuModuleUnload) when its owner dies: the module of a built
// kernel, or the one a failed entry lookup leaves behind.
class LoadedModule {
 public:
  LoadedModule(const CudaDevice& device, CUmodule module) : device_(&device), module_(module) {}
  LoadedModule(LoadedModule&& other) noexcept
      : device_(other.device_), module_(std::exchange(other.module_, nullptr)) {}
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  LoadedModule& operator=(LoadedModule&&) = delete;
  ~LoadedModule();

 private:
  const CudaDevice* device_;
  CUmodule module_;
};

// A kernel the cuda device built: the entry function of its cubin, which stays loaded as
// long as the module is alive.
class CudaKernelModule : public Module {
 public:
  CudaKernelModule(codegen::KernelABI abi, LoadedModule loaded, CUfunction function)
      : Module(std::move(abi)), loaded_(std::move(loaded)), function_(function) {}
  CUfunction function() const { return function_; }

 private:
  LoadedModule loaded_;
  CUfunction function_;
};

// The message of a sticky error that `call_message` (a failed call, as
// DriverApi::describe writes it) reported: it names `culprit`, the last kernel meTile
// launched ("" when none), and says when the fault surfaced at a later call than that
// kernel's own wait (`call_kernel`, the kernel the failed call was about, differs).
std::string kernel_fault_message(std::string_view culprit, std::string_view call_kernel,
                                 std::string_view call_message);

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
  // cuCtxSynchronize: waits for every stream of the context.
  void synchronize() override;

  // "NVIDIA H200 (compute capability 9.0)"
  std::string description() const;
  // Throws the error of a failed driver call (`kernel` names the kernel involved, if any);
  // a sticky error marks the context unusable, and every later call says so. The fault
  // names the last kernel launched, since a kernel that did not wait faults later.
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
  int cores_ = 1;  // streaming multiprocessors: a persistent kernel's workers
  std::string gpu_name_;
  mutable std::mutex state_mutex_;  // guards the two strings below
  mutable std::string fault_;       // the sticky error that made the context unusable
  std::string last_launched_;       // the kernel of the last successful cuLaunchKernel
};

// The reason the cuda device is unavailable here ("" when it is available): libcuda does
// not load, cuInit fails, or there is no GPU.
std::string cuda_unavailable_reason();
// The process-wide cuda device; UserError with cuda_unavailable_reason() when there is none.
CudaDevice& cuda_device();

}  // namespace metile::runtime::cuda
