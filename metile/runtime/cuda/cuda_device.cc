#include "metile/runtime/cuda/cuda_device.h"

#include <array>
#include <optional>
#include <vector>

#include "metile/runtime/cuda/bounds_launch.h"
#include "metile/runtime/cuda/cubin_cache.h"
#include "metile/runtime/cuda/launch_gpu.h"
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

// Two events around a launch (in the GPU's current context), destroyed on every path out.
struct EventPair {
  const Gpu& device;
  CUevent start = nullptr, stop = nullptr;
  EventPair(const Gpu& d, std::string_view kernel) : device(d) {
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
    ScopedContext current(gpu_);
    gpu_.api().cuMemFree(address_);
  } catch (const UserError&) {
  }
}

Device& CudaBufferStorage::device() const {
  return device_;
}

void CudaBufferStorage::copy_from_host(std::size_t offset, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  ScopedContext current(gpu_);
  gpu_.check(gpu_.api().cuMemcpyHtoD(address_ + offset, src, bytes), "cuMemcpyHtoD");
}

void CudaBufferStorage::copy_to_host(std::size_t offset, void* dst, std::size_t bytes) const {
  if (bytes == 0) return;
  ScopedContext current(gpu_);
  gpu_.check(gpu_.api().cuMemcpyDtoH(dst, address_ + offset, bytes), "cuMemcpyDtoH");
}

// -- modules ---------------------------------------------------------------------------

LoadedModule::~LoadedModule() {
  if (!module_) return;
  // As for buffers: a faulted or torn-down context takes its modules with it.
  try {
    ScopedContext current(*gpu_);
    gpu_->api().cuModuleUnload(module_);
  } catch (const UserError&) {
  }
}

CUfunction CudaKernelModule::function_on(const Gpu& gpu) const {
  std::lock_guard lock(mutex_);
  if (auto it = loaded_.find(gpu.ordinal()); it != loaded_.end()) return it->second.function;
  if (!architecture_.empty() && architecture_ != gpu.architecture())
    throw NotSupported("kernel '" + abi().kernel_name + "' was compiled for " + architecture_ +
                       " and cannot run on " + gpu.description() + " (" + gpu.architecture() +
                       "): meTile compiles a process's kernels for one architecture, the GPU's "
                       "that was current at the compile");
  return loaded_.emplace(gpu.ordinal(), gpu.load(image_, abi())).first->second.function;
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

// -- one GPU ---------------------------------------------------------------------------

Gpu::Gpu(const DriverApi& api, int ordinal) : api_(&api), ordinal_(ordinal) {
  check(api_->cuDeviceGet(&device_, ordinal), "cuDeviceGet");
  const auto attribute = [&](int& value, int which, const char* call) {
    check(api_->cuDeviceGetAttribute(&value, which, device_), call);
  };
  attribute(major_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
            "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)");
  attribute(minor_, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
            "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)");
  attribute(limits_.multiprocessors, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
            "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)");
  attribute(limits_.max_shared_optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)");
  attribute(limits_.max_registers_per_block, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK,
            "cuDeviceGetAttribute(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)");
  char name[256] = {};
  check(api_->cuDeviceGetName(name, sizeof(name) - 1, device_), "cuDeviceGetName");
  name_ = name;
  // Retained for the process: torch shares the primary context, and modules and buffers
  // of this GPU may be released at any time before exit.
  check(api_->cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
}

std::string Gpu::description() const {
  return "GPU " + std::to_string(ordinal_) + " (" + name_ + ", compute capability " +
         std::to_string(major_) + "." + std::to_string(minor_) + ")";
}

std::string Gpu::architecture() const {
  return gpu_architecture(major_, minor_, NvrtcOutput::Cubin);
}

const target::Target& Gpu::target() const {
  if (major_ == 9 && minor_ == 0) return target::target_by_name("sm90");
  throw NotSupported("the cuda device's " + description() +
                     " has no Target in meTile, which has one only for compute capability 9.0 "
                     "(sm90: H100, H200)");
}

void Gpu::check(CUresult result, const char* call, std::string_view kernel) const {
  if (result == CUDA_SUCCESS) return;
  const std::string message = api_->describe(result, call, kernel);
  if (!is_sticky_error(result)) throw UserError("cuda device: " + message);
  std::string fault;
  {
    std::lock_guard lock(state_mutex_);
    if (fault_.empty())
      fault_ = description() + ": " + kernel_fault_message(last_launched_, kernel, message);
    fault = fault_;
  }
  throw KernelFaultError(fault);
}

void Gpu::check_usable() const {
  std::lock_guard lock(state_mutex_);
  if (!fault_.empty())
    throw KernelFaultError("the cuda device's " + description() +
                           " is unusable after an earlier kernel fault (" + fault_ + ")");
}

void Gpu::launched(const std::string& kernel) const {
  std::lock_guard lock(state_mutex_);
  last_launched_ = kernel;
}

void Gpu::synchronize() const {
  ScopedContext current(*this);
  check(api_->cuCtxSynchronize(), "cuCtxSynchronize");
}

FunctionLimits Gpu::function_limits(CUfunction function, const std::string& kernel) const {
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

LoadedFunction Gpu::load(const std::string& image, const codegen::KernelABI& abi) const {
  const std::string& kernel = abi.kernel_name;
  ScopedContext current(*this);
  CUmodule module = nullptr;
  // cuModuleLoadData reads PTX up to its terminating NUL, a cubin by its header.
  check(api_->cuModuleLoadData(&module, image.c_str()), "cuModuleLoadData", kernel);
  LoadedModule loaded(*this, module);  // unloaded again if anything below throws
  CUfunction function = nullptr;
  if (CUresult r = api_->cuModuleGetFunction(&function, module, kernel.c_str());
      r == CUDA_ERROR_NOT_FOUND)
    throw InternalError(api_->describe(r, "cuModuleGetFunction", kernel) +
                        ": the emitted entry must be declared extern \"C\" __global__");
  else
    check(r, "cuModuleGetFunction", kernel);
  check_function_limits(abi, function_limits(function, kernel), limits_.max_shared_optin,
                        limits_.max_registers_per_block, description());
  if (abi.threadgroup_bytes > kDefaultSharedMemoryBytes)
    check(api_->cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(abi.threadgroup_bytes)),
          "cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)", kernel);
  return LoadedFunction{std::move(loaded), function};
}

ScopedContext::ScopedContext(const Gpu& gpu) : gpu_(gpu) {
  gpu.check_usable();
  gpu.check(gpu.api().cuCtxGetCurrent(&previous_), "cuCtxGetCurrent");
  if (previous_ == gpu.context()) return;
  gpu.check(gpu.api().cuCtxSetCurrent(gpu.context()), "cuCtxSetCurrent");
  switched_ = true;
}

ScopedContext::~ScopedContext() {
  // The caller's context (or none) again; this cannot fail for a context that was current.
  if (switched_) gpu_.api().cuCtxSetCurrent(previous_);
}

// -- the device ------------------------------------------------------------------------

CudaDevice::CudaDevice() {
  if (std::string why = probe_gpu(api_); !why.empty())
    throw UserError("the cuda device is not available: " + why);
  int count = 0;
  if (CUresult r = api_->cuDeviceGetCount(&count); r != CUDA_SUCCESS)
    throw UserError("cuda device: " + api_->describe(r, "cuDeviceGetCount", ""));
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice handle = 0;
    if (CUresult r = api_->cuDeviceGet(&handle, ordinal); r != CUDA_SUCCESS)
      throw UserError("cuda device: " + api_->describe(r, "cuDeviceGet", ""));
    handles_.push_back(handle);
  }
  gpus_.resize(handles_.size());
}

Gpu& CudaDevice::gpu(int ordinal) const {
  if (ordinal < 0 || ordinal >= gpu_count())
    throw UserError("there is no GPU cuda:" + std::to_string(ordinal) + "; the driver reports " +
                    std::to_string(gpu_count()) + " (cuda:0 to cuda:" +
                    std::to_string(gpu_count() - 1) + "; CUDA_VISIBLE_DEVICES chooses them)");
  std::lock_guard lock(gpus_mutex_);
  std::unique_ptr<Gpu>& gpu = gpus_[static_cast<std::size_t>(ordinal)];
  if (!gpu) gpu = std::make_unique<Gpu>(*api_, ordinal);
  return *gpu;
}

Gpu& CudaDevice::current_gpu() const {
  CUcontext current = nullptr;
  CUdevice handle = 0;
  // No current context, or one the driver cannot place: GPU 0.
  if (api_->cuCtxGetCurrent(&current) != CUDA_SUCCESS || !current ||
      api_->cuCtxGetDevice(&handle) != CUDA_SUCCESS)
    return gpu(0);
  for (std::size_t ordinal = 0; ordinal < handles_.size(); ++ordinal)
    if (handles_[ordinal] == handle) return gpu(static_cast<int>(ordinal));
  return gpu(0);
}

std::string CudaDevice::description() const {
  return current_gpu().description();
}

const target::Target& CudaDevice::target() const {
  return current_gpu().target();
}

Buffer CudaDevice::allocate(std::size_t bytes) {
  const Gpu& on = current_gpu();
  CUdeviceptr address = 0;
  if (bytes > 0) {
    ScopedContext current(on);
    on.check(api_->cuMemAlloc(&address, bytes), "cuMemAlloc");
  }
  return Buffer(std::make_shared<CudaBufferStorage>(*this, on, address, bytes, true));
}

Buffer CudaDevice::wrap(std::uintptr_t address, std::size_t bytes) {
  if (address == 0 && bytes > 0) throw UserError("cuda device: cannot wrap a null pointer");
  if (bytes == 0)
    return Buffer(std::make_shared<CudaBufferStorage>(*this, current_gpu(), address, 0, false));
  int ordinal = -1;
  if (CUresult r = api_->cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                               static_cast<CUdeviceptr>(address));
      r != CUDA_SUCCESS)
    throw UserError(
        "cuda device: cannot use the memory at address " + std::to_string(address) + " (" +
        std::to_string(bytes) + " bytes), which the CUDA driver does not know as GPU memory: " +
        api_->describe(r, "cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)", ""));
  return Buffer(std::make_shared<CudaBufferStorage>(*this, gpu(ordinal), address, bytes, false));
}

std::shared_ptr<const Module> CudaDevice::compile(std::string_view source,
                                                  const codegen::KernelABI& abi) {
  const std::string& kernel = abi.kernel_name;
  const Gpu& on = current_gpu();
  if (abi.threadgroup_bytes > on.limits().max_shared_optin)
    throw OutOfResources("kernel '" + kernel + "' needs " + std::to_string(abi.threadgroup_bytes) +
                         " bytes of shared memory; " + on.description() + " allows " +
                         std::to_string(on.limits().max_shared_optin) + " per block");
  // The PTX route's text goes to the driver as it is: the driver's JIT compiles it, no NVRTC.
  std::string image, architecture;
  if (abi.source_is_ptx) {
    image = std::string(source);
  } else {
    std::string why;
    const Nvrtc* nvrtc = Nvrtc::shared(&why);
    if (!nvrtc) throw UserError("the cuda device cannot compile kernel '" + kernel + "': " + why);
    architecture = on.architecture();
    const std::vector<std::string> options = nvrtc_options(architecture);
    const std::string key = cubin_cache_key(source, options, nvrtc->version(), architecture);
    image = CubinCache::shared().get_or_build(
        key, [&] { return nvrtc->compile(source, kernel, options, NvrtcOutput::Cubin); });
  }
  auto module = std::make_shared<const CudaKernelModule>(abi, architecture, std::move(image));
  module->function_on(on);  // a module the driver refuses is an error of the compile
  return module;
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
  std::vector<PlacedBuffer> placed;
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
    placed.push_back({abi.params[i].name, storage->gpu().ordinal(), storage->size_bytes()});
  }
  // The buffers' GPU; the current one for a launch without (non-empty) buffers.
  const int placed_on = launch_gpu(kernel, placed, -1);
  const Gpu& on = placed_on < 0 ? current_gpu() : gpu(placed_on);
  const CUfunction function = cuda_module->function_on(on);
  // A warp-specialised sm90 kernel also takes its TMA tensor maps, and runs persistently.
  std::vector<TensorMap> maps = encode_tensor_maps(*api_, abi, bound, addresses);
  for (TensorMap& m : maps) params.push_back(m.bytes.data());
  // METILE_DEBUG=bounds: the buffers' extents, then the fault record (bounds_launch.h).
  std::vector<unsigned long long> extents;
  if (abi.bounds_checks) {
    extents = buffer_extents(abi, bound);
    check_tensor_maps_fit(abi, bound, extents);
    for (unsigned long long& e : extents) params.push_back(&e);
  }
  std::array<unsigned, 3> blocks = {grid.x, grid.y, grid.z};
  if (abi.persistent) blocks = persistent_grid(abi, bound, blocks, on.limits().multiprocessors);
  if (blocks[0] == 0) return {};  // no tile to compute
  ScopedContext current(on);
  std::optional<FaultRecordMemory> record;
  if (abi.bounds_checks) params.push_back(record.emplace(on).argument());
  const auto stream = reinterpret_cast<CUstream>(options.stream);
  const auto& block = abi.threads_per_threadgroup;
  auto queue_kernel = [&] {
    on.check(api_->cuLaunchKernel(
                 function, blocks[0], blocks[1], blocks[2], static_cast<unsigned>(block[0]),
                 static_cast<unsigned>(block[1]), static_cast<unsigned>(block[2]),
                 static_cast<unsigned>(abi.threadgroup_bytes), stream, params.data(), nullptr),
             "cuLaunchKernel", kernel);
    on.launched(kernel);
  };
  // A bounds-checked launch always waits: its fault record is read after the kernel.
  if (!options.wait && !record) {
    // Queued on the caller's stream, ordered with its other work; nothing waits here.
    queue_kernel();
    return {};
  }
  EventPair events(on, kernel);
  on.check(api_->cuEventRecord(events.start, stream), "cuEventRecord", kernel);
  queue_kernel();
  on.check(api_->cuEventRecord(events.stop, stream), "cuEventRecord", kernel);
  // A fault inside the kernel surfaces here, as a sticky error naming the kernel.
  on.check(api_->cuEventSynchronize(events.stop), "cuEventSynchronize", kernel);
  float elapsed_ms = 0;
  on.check(api_->cuEventElapsedTime(&elapsed_ms, events.start, events.stop), "cuEventElapsedTime",
           kernel);
  if (record) {
    const codegen::cuda_bounds::FaultRecord fault = record->read(kernel);
    if (fault.state != codegen::cuda_bounds::kNoFault) throw bounds_fault(fault, abi, extents);
  }
  return {static_cast<double>(elapsed_ms)};
}

void CudaDevice::synchronize() {
  std::vector<const Gpu*> opened;
  {
    std::lock_guard lock(gpus_mutex_);
    for (const std::unique_ptr<Gpu>& gpu : gpus_)
      if (gpu) opened.push_back(gpu.get());
  }
  for (const Gpu* gpu : opened) gpu->synchronize();
}

void CudaDevice::synchronize_gpu(int index) {
  gpu(index).synchronize();
}

std::string cuda_unavailable_reason() {
  static const std::string reason = [] {
    const DriverApi* api = nullptr;
    return probe_gpu(api);
  }();
  return reason;
}

CudaDevice& cuda_device() {
  static CudaDevice* device = new CudaDevice;
  return *device;
}

}  // namespace metile::runtime::cuda
