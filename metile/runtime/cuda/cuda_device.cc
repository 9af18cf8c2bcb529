#include "metile/runtime/cuda/cuda_device.h"

#include <array>
#include <vector>

#include "metile/runtime/cuda/cubin_cache.h"
#include "metile/runtime/cuda/nvrtc.h"
#include "metile/runtime/cuda/tensor_map.h"
#include "metile/runtime/kernel_errors.h"
#include "metile/support/errors.h"

namespace metile::runtime::cuda {

namespace {

// The first GPU, or why there is none.
std::string probe_gpu(const DriverApi*& api) {
  std::string why;
  api = DriverApi::shared(&why);
  if (!api) return why;
  int count = 0;
  if (CUresult r = api->cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    return api->describe(r, "cuDeviceGetCount", "");
  if (count == 0) return "the CUDA driver reports no GPU";
  return "";
}

// Two events around a launch, destroyed on every path out.
struct EventPair {
  const CudaDevice& device;
  CUevent start = nullptr, stop = nullptr;
  EventPair(const CudaDevice& d, std::string_view kernel) : device(d) {
    d.check(d.api().cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate", kernel);
    d.check(d.api().cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate", kernel);
  }
  ~EventPair() {
    if (start) device.api().cuEventDestroy(start);
    if (stop) device.api().cuEventDestroy(stop);
  }
};

}  // namespace

// -- buffers ---------------------------------------------------------------------------

CudaBufferStorage::~CudaBufferStorage() {
  if (!owned_ || address_ == 0) return;
  // Errors cannot leave a destructor; a faulted context frees everything with the process.
  try {
    device_.make_current();
    device_.api().cuMemFree(address_);
  } catch (const UserError&) {
  }
}

Device& CudaBufferStorage::device() const {
  return device_;
}

void CudaBufferStorage::copy_from_host(std::size_t offset, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  device_.make_current();
  device_.check(device_.api().cuMemcpyHtoD(address_ + offset, src, bytes), "cuMemcpyHtoD");
}

void CudaBufferStorage::copy_to_host(std::size_t offset, void* dst, std::size_t bytes) const {
  if (bytes == 0) return;
  device_.make_current();
  device_.check(device_.api().cuMemcpyDtoH(dst, address_ + offset, bytes), "cuMemcpyDtoH");
}

// -- modules ---------------------------------------------------------------------------

LoadedModule::~LoadedModule() {
  if (!module_) return;
  // As for buffers: a faulted or torn-down context takes its modules with it.
  try {
    device_->make_current();
    device_->api().cuModuleUnload(module_);
  } catch (const UserError&) {
  }
}

std::string kernel_fault_message(std::string_view culprit, std::string_view call_kernel,
                                 std::string_view call_message) {
  if (culprit.empty()) culprit = call_kernel;
  std::string message =
      (culprit.empty() ? std::string("a kernel") : "kernel '" + std::string(culprit) + "'") +
      " faulted on the GPU: " + std::string(call_message) + ".";
  if (!culprit.empty() && culprit != call_kernel)
    message +=
        " It is the last kernel meTile launched: a launch that does not wait reports "
        "its fault at the next call that waits for the GPU, this one.";
  return message +
         " The CUDA context is unusable now (a sticky error): every later CUDA call in this "
         "process fails, restart it";
}

// -- the device ------------------------------------------------------------------------

CudaDevice::CudaDevice() {
  if (std::string why = probe_gpu(api_); !why.empty())
    throw UserError("the cuda device is not available: " + why);
  check(api_->cuDeviceGet(&device_, 0), "cuDeviceGet");
  check(api_->cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  check(api_->cuDeviceGetAttribute(&major_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
        "cuDeviceGetAttribute");
  check(api_->cuDeviceGetAttribute(&minor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
        "cuDeviceGetAttribute");
  check(api_->cuDeviceGetAttribute(&cores_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_),
        "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)");
  check(api_->cuDeviceGetAttribute(&max_shared_optin_,
                                   CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device_),
        "cuDeviceGetAttribute");
  char name[256] = {};
  check(api_->cuDeviceGetName(name, sizeof(name) - 1, device_), "cuDeviceGetName");
  gpu_name_ = name;
}

std::string CudaDevice::description() const {
  return gpu_name_ + " (compute capability " + std::to_string(major_) + "." +
         std::to_string(minor_) + ")";
}

void CudaDevice::check(CUresult result, const char* call, std::string_view kernel) const {
  if (result == CUDA_SUCCESS) return;
  const std::string message = api_->describe(result, call, kernel);
  if (!is_sticky_error(result)) throw UserError("cuda device: " + message);
  std::string fault;
  {
    std::lock_guard lock(state_mutex_);
    if (fault_.empty()) fault_ = kernel_fault_message(last_launched_, kernel, message);
    fault = fault_;
  }
  throw KernelFaultError(fault);
}

void CudaDevice::make_current() const {
  {
    std::lock_guard lock(state_mutex_);
    if (!fault_.empty())
      throw KernelFaultError("the cuda device is unusable after an earlier kernel fault (" +
                             fault_ + ")");
  }
  check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

const target::Target& CudaDevice::target() const {
  if (major_ == 9 && minor_ == 0) return target::target_by_name("sm90");
  throw NotSupported("the cuda device's GPU is " + description() +
                     "; meTile has a Target only for compute capability 9.0 (sm90: H100, H200)");
}

Buffer CudaDevice::allocate(std::size_t bytes) {
  CUdeviceptr address = 0;
  if (bytes > 0) {
    make_current();
    check(api_->cuMemAlloc(&address, bytes), "cuMemAlloc");
  }
  return Buffer(std::make_shared<CudaBufferStorage>(*this, address, bytes, true));
}

Buffer CudaDevice::wrap(std::uintptr_t address, std::size_t bytes) {
  if (address == 0 && bytes > 0) throw UserError("cuda device: cannot wrap a null pointer");
  return Buffer(std::make_shared<CudaBufferStorage>(*this, address, bytes, false));
}

FunctionLimits CudaDevice::function_limits(CUfunction function, const std::string& kernel) const {
  FunctionLimits limits;
  int shared = 0;
  check(api_->cuFuncGetAttribute(&limits.max_threads_per_block,
                                 CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, function),
        "cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)", kernel);
  check(api_->cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, function),
        "cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)", kernel);
  check(
      api_->cuFuncGetAttribute(&limits.registers_per_thread, CU_FUNC_ATTRIBUTE_NUM_REGS, function),
      "cuFuncGetAttribute(CU_FUNC_ATTRIBUTE_NUM_REGS)", kernel);
  limits.static_shared_bytes = shared;
  return limits;
}

std::shared_ptr<const Module> CudaDevice::compile(std::string_view source,
                                                  const codegen::KernelABI& abi) {
  const std::string& kernel = abi.kernel_name;
  if (abi.threadgroup_bytes > max_shared_optin_)
    throw OutOfResources("kernel '" + kernel + "' needs " + std::to_string(abi.threadgroup_bytes) +
                         " bytes of shared memory; " + description() + " allows " +
                         std::to_string(max_shared_optin_) + " per block");
  // The PTX route's text goes to the driver as it is: the driver's JIT compiles it, no NVRTC.
  std::string image;
  if (abi.source_is_ptx) {
    image = std::string(source);  // cuModuleLoadData reads PTX up to its terminating NUL
  } else {
    std::string why;
    const Nvrtc* nvrtc = Nvrtc::shared(&why);
    if (!nvrtc) throw UserError("the cuda device cannot compile kernel '" + kernel + "': " + why);
    const std::string architecture = gpu_architecture(major_, minor_, NvrtcOutput::Cubin);
    const std::vector<std::string> options = nvrtc_options(architecture);
    const std::string key = cubin_cache_key(source, options, nvrtc->version(), architecture);
    image = CubinCache::shared().get_or_build(
        key, [&] { return nvrtc->compile(source, kernel, options, NvrtcOutput::Cubin); });
  }

  make_current();
  CUmodule module = nullptr;
  check(api_->cuModuleLoadData(&module, image.c_str()), "cuModuleLoadData", kernel);
  LoadedModule loaded(*this, module);  // unloaded again if anything below throws
  CUfunction function = nullptr;
  if (CUresult r = api_->cuModuleGetFunction(&function, module, kernel.c_str());
      r == CUDA_ERROR_NOT_FOUND)
    throw InternalError(api_->describe(r, "cuModuleGetFunction", kernel) +
                        ": the emitted entry must be declared extern \"C\" __global__");
  else
    check(r, "cuModuleGetFunction", kernel);
  check_function_limits(abi, function_limits(function, kernel), max_shared_optin_, description());
  if (abi.threadgroup_bytes > kDefaultSharedMemoryBytes)
    check(api_->cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(abi.threadgroup_bytes)),
          "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)", kernel);
  return std::make_shared<const CudaKernelModule>(abi, std::move(loaded), function);
}

LaunchTiming CudaDevice::launch(const Module& module, const Grid& grid,
                                std::span<const KernelArg> args, const LaunchOptions& options) {
  const auto* cuda_module = dynamic_cast<const CudaKernelModule*>(&module);
  const codegen::KernelABI& abi = module.abi();
  const std::string& kernel = abi.kernel_name;
  if (!cuda_module)
    throw UserError("kernel '" + kernel +
                    "' was built for another device, not for the cuda device");
  std::vector<BoundArg> bound = bind_kernel_args(abi, args);
  // cuLaunchKernel reads each parameter's bytes through a pointer: device addresses for
  // buffers, the bound scalar (in the parameter's dtype; f16/bf16 as bits) otherwise.
  std::vector<CUdeviceptr> addresses(bound.size(), 0);
  std::vector<void*> params(bound.size(), nullptr);
  for (std::size_t i = 0; i < bound.size(); ++i) {
    if (!bound[i].buffer) {
      params[i] = bound[i].scalar;
      continue;
    }
    const auto* storage = dynamic_cast<const CudaBufferStorage*>(&bound[i].buffer->storage());
    if (!storage)
      throw UserError("kernel '" + kernel + "' parameter " + std::to_string(i) + " ('" +
                      abi.params[i].name + "') is a buffer on device '" +
                      bound[i].buffer->device().name() + "'; the kernel runs on the cuda device");
    addresses[i] = storage->address();
    params[i] = &addresses[i];
  }
  // A warp-specialised sm90 kernel also takes its TMA tensor maps, and runs persistently.
  std::vector<TensorMap> maps = encode_tensor_maps(*api_, abi, bound, addresses);
  for (TensorMap& m : maps) params.push_back(m.bytes.data());
  std::array<unsigned, 3> blocks = {grid.x, grid.y, grid.z};
  if (abi.persistent) blocks = persistent_grid(abi, bound, blocks, cores_);
  if (blocks[0] == 0) return {};  // no tile to compute
  make_current();
  const auto stream = reinterpret_cast<CUstream>(options.stream);
  const auto& block = abi.threads_per_threadgroup;
  auto queue_kernel = [&] {
    check(api_->cuLaunchKernel(cuda_module->function(), blocks[0], blocks[1], blocks[2],
                               static_cast<unsigned>(block[0]), static_cast<unsigned>(block[1]),
                               static_cast<unsigned>(block[2]),
                               static_cast<unsigned>(abi.threadgroup_bytes), stream, params.data(),
                               nullptr),
          "cuLaunchKernel", kernel);
    std::lock_guard lock(state_mutex_);
    last_launched_ = kernel;
  };
  if (!options.wait) {
    // Queued on the caller's stream, ordered with its other work; nothing waits here.
    queue_kernel();
    return {};
  }
  EventPair events(*this, kernel);
  check(api_->cuEventRecord(events.start, stream), "cuEventRecord", kernel);
  queue_kernel();
  check(api_->cuEventRecord(events.stop, stream), "cuEventRecord", kernel);
  // A fault inside the kernel surfaces here, as a sticky error naming the kernel.
  check(api_->cuEventSynchronize(events.stop), "cuEventSynchronize", kernel);
  float elapsed_ms = 0;
  check(api_->cuEventElapsedTime(&elapsed_ms, events.start, events.stop), "cuEventElapsedTime",
        kernel);
  return {static_cast<double>(elapsed_ms)};
}

void CudaDevice::synchronize() {
  make_current();
  check(api_->cuCtxSynchronize(), "cuCtxSynchronize");
}

std::string cuda_unavailable_reason() {
  static const std::string reason = [] {
    const DriverApi* api = nullptr;
    return probe_gpu(api);
  }();
  return reason;
}

CudaDevice& cuda_device() {
  static CudaDevice device;
  return device;
}

}  // namespace metile::runtime::cuda
