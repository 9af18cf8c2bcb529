// The cuda device: the emitted CUDA C++ compiled by NVRTC to a cubin for the GPU's
// architecture (cached on disk, cubin_cache.h), buffers in device memory, launches
// through the driver API on a caller's stream: queued without waiting, or waited for and
// timed with CUDA events (LaunchOptions::wait). It is available when libcuda loads and
// reports at least one GPU.
//
// It drives every visible GPU (CUDA_VISIBLE_DEVICES chooses which), each a Gpu opened on
// first use with its primary context (the one torch uses), its limits and its fault state.
// A buffer lives on one GPU; a launch runs on the GPU of its buffer arguments (an error
// naming them when they are on several, launch_gpu.h) with that GPU's context current for
// the call, and the caller's context current again after it. A compiled kernel is one cubin
// per architecture, shared by GPUs of that architecture and loaded on each GPU at its first
// launch there.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "metile/runtime/cuda/driver_api.h"
#include "metile/runtime/cuda/function_limits.h"
#include "metile/runtime/device.h"

namespace metile::runtime::cuda {

class CudaDevice;
class Gpu;

// Device memory on one GPU: allocated by the device (freed with the last handle) or
// wrapped caller memory (never freed here).
class CudaBufferStorage : public BufferStorage {
 public:
  CudaBufferStorage(CudaDevice& device, const Gpu& gpu, CUdeviceptr address, std::size_t bytes,
                    bool owned)
      : device_(device), gpu_(gpu), address_(address), bytes_(bytes), owned_(owned) {}
  ~CudaBufferStorage() override;
  Device& device() const override;
  std::size_t size_bytes() const override { return bytes_; }
  void* host_data() const override { return nullptr; }
  void copy_from_host(std::size_t offset, const void* src, std::size_t bytes) override;
  void copy_to_host(std::size_t offset, void* dst, std::size_t bytes) const override;
  CUdeviceptr address() const { return address_; }
  const Gpu& gpu() const { return gpu_; }

 private:
  CudaDevice& device_;
  const Gpu& gpu_;
  CUdeviceptr address_;
  std::size_t bytes_;
  bool owned_;
};

// A loaded cubin, unloaded (cuModuleUnload) when its owner dies: a kernel's module on one
// GPU, or the one a failed entry lookup leaves behind.
class LoadedModule {
 public:
  LoadedModule(const Gpu& gpu, CUmodule module) : gpu_(&gpu), module_(module) {}
  LoadedModule(LoadedModule&& other) noexcept
      : gpu_(other.gpu_), module_(std::exchange(other.module_, nullptr)) {}
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  LoadedModule& operator=(LoadedModule&&) = delete;
  ~LoadedModule();

 private:
  const Gpu* gpu_;
  CUmodule module_;
};

// A kernel's entry function on one GPU; it stays valid while `module` is loaded.
struct LoadedFunction {
  LoadedModule module;
  CUfunction function = nullptr;
};

// What one GPU allows, read from it when it is opened.
struct GpuLimits {
  int max_shared_optin = 0;         // shared memory bytes a block may opt in to
  int max_registers_per_block = 0;  // 32-bit registers of one block's threads together
  int multiprocessors = 1;          // a persistent kernel's workers
};

// The message of a sticky error that `call_message` (a failed call, as
// DriverApi::describe writes it) reported: it names `culprit`, the last kernel meTile
// launched ("" when none), and says when the fault surfaced at a later call than that
// kernel's own wait (`call_kernel`, the kernel the failed call was about, differs).
std::string kernel_fault_message(std::string_view culprit, std::string_view call_kernel,
                                 std::string_view call_message);

// One GPU: its primary context (retained when the GPU is opened, kept for the process),
// limits and sticky-fault state. A fault makes only this GPU's context unusable.
class Gpu {
 public:
  // Opens GPU `ordinal` (a CUdevice ordinal of the visible GPUs).
  Gpu(const DriverApi& api, int ordinal);
  Gpu(const Gpu&) = delete;
  Gpu& operator=(const Gpu&) = delete;

  int ordinal() const { return ordinal_; }
  CUcontext context() const { return context_; }
  const DriverApi& api() const { return *api_; }
  const GpuLimits& limits() const { return limits_; }
  // "GPU 1 (NVIDIA H200, compute capability 9.0)"
  std::string description() const;
  // The NVRTC architecture its cubins are built for ("sm_90a").
  std::string architecture() const;
  // sm90 for compute capability 9.0; NotSupported naming any other capability.
  const target::Target& target() const;

  // Throws the error of a failed driver call (`kernel` names the kernel involved, if any);
  // a sticky error marks the context unusable, and every later call says so. The fault
  // names the last kernel launched here, since a kernel that did not wait faults later.
  void check(CUresult result, const char* call, std::string_view kernel = {}) const;
  // KernelFaultError when an earlier kernel fault left the context unusable.
  void check_usable() const;
  // Loads `image` (a cubin, or PTX the driver compiles) into this GPU's context and finds
  // the entry of `abi`, checked against this GPU's limits (OutOfResources).
  LoadedFunction load(const std::string& image, const codegen::KernelABI& abi) const;
  // Records the kernel of a successful cuLaunchKernel: a later fault names it.
  void launched(const std::string& kernel) const;
  // cuCtxSynchronize: waits for every stream of this GPU's context.
  void synchronize() const;

 private:
  // What the driver allows the compiled function (threads per block, static shared memory).
  FunctionLimits function_limits(CUfunction function, const std::string& kernel) const;

  const DriverApi* api_;
  int ordinal_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  int major_ = 0, minor_ = 0;
  GpuLimits limits_;
  std::string name_;
  mutable std::mutex state_mutex_;     // guards the two strings below
  mutable std::string fault_;          // the sticky error that made the context unusable
  mutable std::string last_launched_;  // the kernel of the last successful cuLaunchKernel
};

// Makes a GPU's context the calling thread's current one for a scope, then the one that was
// current before (torch's, say) again: the driver's current context is per thread, and the
// caller's own CUDA calls must find theirs. KernelFaultError when the GPU faulted before.
class ScopedContext {
 public:
  explicit ScopedContext(const Gpu& gpu);
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  const Gpu& gpu_;
  CUcontext previous_ = nullptr;
  bool switched_ = false;
};

// A kernel the cuda device built: one image (a cubin for `architecture`, or PTX, which the
// driver compiles for any GPU: architecture "") and its entry function on each GPU that
// launched it, loaded there on first use.
class CudaKernelModule : public Module {
 public:
  CudaKernelModule(codegen::KernelABI abi, std::string architecture, std::string image)
      : Module(std::move(abi)), architecture_(std::move(architecture)), image_(std::move(image)) {}
  // The entry function on `gpu`, loading the image there the first time; NotSupported when
  // the image is a cubin of another architecture than the GPU's.
  CUfunction function_on(const Gpu& gpu) const;

 private:
  std::string architecture_;
  std::string image_;
  mutable std::mutex mutex_;                      // guards loaded_
  mutable std::map<int, LoadedFunction> loaded_;  // by GPU ordinal
};

class CudaDevice : public Device {
 public:
  // Finds the visible GPUs (none is opened yet); UserError saying why when there is none.
  CudaDevice();
  std::string name() const override { return "cuda"; }
  std::string kind() const override { return "cuda"; }
  // current_gpu()'s Target: sm90 for compute capability 9.0; NotSupported otherwise.
  const target::Target& target() const override;
  // On current_gpu().
  Buffer allocate(std::size_t bytes) override;
  using Device::allocate;
  // On the GPU the driver says the memory is on (current_gpu() for an empty buffer);
  // UserError for an address the driver does not know as GPU memory.
  Buffer wrap(std::uintptr_t address, std::size_t bytes) override;
  // A cubin for current_gpu()'s architecture (from the disk cache when there), loaded on
  // that GPU now so that errors surface here, and on other GPUs at their first launch.
  std::shared_ptr<const Module> compile(std::string_view source,
                                        const codegen::KernelABI& abi) override;
  // On the GPU of the buffer arguments (current_gpu() when there is none); UserError
  // naming the parameters and their GPUs when they are on several. `options.stream` must be
  // a stream of that GPU (torch's current stream of the tensors' device).
  LaunchTiming launch(const Module& module, const Grid& grid, std::span<const KernelArg> args,
                      const LaunchOptions& options = {}) override;
  // Waits for every GPU opened so far.
  void synchronize() override;
  int gpu_count() const override { return static_cast<int>(handles_.size()); }
  void synchronize_gpu(int index) override;

  // GPU `ordinal`, opened on first use; UserError for an ordinal that is not a visible GPU.
  Gpu& gpu(int ordinal) const;
  // The GPU whose primary context is current on the calling thread (torch's current
  // device once torch used it), else GPU 0.
  Gpu& current_gpu() const;
  // current_gpu()'s description.
  std::string description() const;
  const DriverApi& api() const { return *api_; }

 private:
  const DriverApi* api_ = nullptr;
  std::vector<CUdevice> handles_;  // by ordinal
  mutable std::mutex gpus_mutex_;  // guards gpus_
  mutable std::vector<std::unique_ptr<Gpu>> gpus_;
};

// The reason the cuda device is unavailable here ("" when it is available): libcuda does
// not load, cuInit fails, or there is no GPU.
std::string cuda_unavailable_reason();
// The process-wide cuda device, never destroyed (modules and buffers that other statics
// hold may outlive any order of destruction); UserError with cuda_unavailable_reason()
// when there is none.
CudaDevice& cuda_device();

}  // namespace metile::runtime::cuda
