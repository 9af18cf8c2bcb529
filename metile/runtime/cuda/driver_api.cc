#include "metile/runtime/cuda/driver_api.h"

namespace metile::runtime::cuda {

std::string cuda_error_message(std::string_view call, std::string_view name,
                               std::string_view description, std::string_view kernel) {
  std::string message = std::string(call) + " failed: " + std::string(name);
  if (!description.empty()) message += " (" + std::string(description) + ")";
  if (!kernel.empty()) message += " [kernel " + std::string(kernel) + "]";
  return message;
}

bool is_sticky_error(CUresult result) {
  switch (result) {
    case 700:  // CUDA_ERROR_ILLEGAL_ADDRESS
    case 702:  // CUDA_ERROR_LAUNCH_TIMEOUT
    case 710:  // CUDA_ERROR_ASSERT
    case 714:  // CUDA_ERROR_HARDWARE_STACK_ERROR
    case 715:  // CUDA_ERROR_ILLEGAL_INSTRUCTION
    case 716:  // CUDA_ERROR_MISALIGNED_ADDRESS
    case 717:  // CUDA_ERROR_INVALID_ADDRESS_SPACE
    case 718:  // CUDA_ERROR_INVALID_PC
    case 719:  // CUDA_ERROR_LAUNCH_FAILED
      return true;
    default:
      return false;
  }
}

namespace {
// Names for the errors a machine without a working driver gives, where cuGetErrorName
// cannot answer (the toolkit's stub library answers every call with an error).
const char* fallback_error_name(CUresult result) {
  switch (result) {
    case 34:
      return "CUDA_ERROR_STUB_LIBRARY";
    case 35:
      return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100:
      return "CUDA_ERROR_NO_DEVICE";
    default:
      return nullptr;
  }
}
}  // namespace

std::string DriverApi::describe(CUresult result, std::string_view call,
                                std::string_view kernel) const {
  const char* name = nullptr;
  const char* description = nullptr;
  // The stub library answers these with an error too: fall back to the number.
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS || !name) name = nullptr;
  if (cuGetErrorString(result, &description) != CUDA_SUCCESS) description = nullptr;
  const char* known = fallback_error_name(result);
  const std::string fallback = known ? known : "CUresult " + std::to_string(result);
  return cuda_error_message(call, name ? name : fallback, description ? description : "", kernel);
}

std::vector<std::string> DriverApi::default_candidates() {
  return SharedLibrary::candidates("METILE_LIBCUDA_LIBRARY",
                                   {"libcuda.so.1", "/usr/local/nvidia/lib64/libcuda.so.1"});
}

const DriverApi* DriverApi::shared(std::string* why) {
  return load_once<DriverApi>(why);
}

std::unique_ptr<DriverApi> DriverApi::load(const std::vector<std::string>& candidates,
                                           std::string& why) {
  auto d = std::make_unique<DriverApi>();
  d->library = SharedLibrary::open(candidates, why);
  if (!d->library.valid()) {
    why = "libcuda cannot be loaded (" + why + ")";
    return nullptr;
  }
  const SharedLibrary& lib = d->library;
  std::string missing;
  bind_symbol(lib, "cuGetErrorName", d->cuGetErrorName, missing);
  bind_symbol(lib, "cuGetErrorString", d->cuGetErrorString, missing);
  bind_symbol(lib, "cuInit", d->cuInit, missing);
  bind_symbol(lib, "cuDriverGetVersion", d->cuDriverGetVersion, missing);
  bind_symbol(lib, "cuDeviceGetCount", d->cuDeviceGetCount, missing);
  bind_symbol(lib, "cuDeviceGet", d->cuDeviceGet, missing);
  bind_symbol(lib, "cuDeviceGetName", d->cuDeviceGetName, missing);
  bind_symbol(lib, "cuDeviceGetAttribute", d->cuDeviceGetAttribute, missing);
  bind_symbol(lib, "cuDevicePrimaryCtxRetain", d->cuDevicePrimaryCtxRetain, missing);
  bind_symbol(lib, "cuCtxSetCurrent", d->cuCtxSetCurrent, missing);
  bind_symbol(lib, "cuCtxGetCurrent", d->cuCtxGetCurrent, missing);
  bind_symbol(lib, "cuCtxGetDevice", d->cuCtxGetDevice, missing);
  bind_symbol(lib, "cuPointerGetAttribute", d->cuPointerGetAttribute, missing);
  bind_symbol(lib, "cuCtxSynchronize", d->cuCtxSynchronize, missing);
  bind_symbol(lib, "cuModuleLoadData", d->cuModuleLoadData, missing);
  bind_symbol(lib, "cuModuleUnload", d->cuModuleUnload, missing);
  bind_symbol(lib, "cuModuleGetFunction", d->cuModuleGetFunction, missing);
  bind_symbol(lib, "cuFuncSetAttribute", d->cuFuncSetAttribute, missing);
  bind_symbol(lib, "cuFuncGetAttribute", d->cuFuncGetAttribute, missing);
  bind_symbol(lib, "cuLaunchKernel", d->cuLaunchKernel, missing);
  bind_symbol(lib, "cuMemAlloc_v2", d->cuMemAlloc, missing);
  bind_symbol(lib, "cuMemFree_v2", d->cuMemFree, missing);
  bind_symbol(lib, "cuMemcpyHtoD_v2", d->cuMemcpyHtoD, missing);
  bind_symbol(lib, "cuMemcpyDtoH_v2", d->cuMemcpyDtoH, missing);
  bind_symbol(lib, "cuStreamSynchronize", d->cuStreamSynchronize, missing);
  bind_symbol(lib, "cuEventCreate", d->cuEventCreate, missing);
  bind_symbol(lib, "cuEventDestroy_v2", d->cuEventDestroy, missing);
  bind_symbol(lib, "cuEventRecord", d->cuEventRecord, missing);
  bind_symbol(lib, "cuEventSynchronize", d->cuEventSynchronize, missing);
  // CUDA 12.8 added the _v2 entry point (cuda.h maps the name to it); older drivers lack it.
  std::string no_v2;
  if (!bind_symbol(lib, "cuEventElapsedTime_v2", d->cuEventElapsedTime, no_v2))
    bind_symbol(lib, "cuEventElapsedTime", d->cuEventElapsedTime, missing);
  std::string no_tma;
  bind_symbol(lib, "cuTensorMapEncodeTiled", d->cuTensorMapEncodeTiled, no_tma);
  if (!missing.empty()) {
    why = lib.path() + " lacks " + missing;
    return nullptr;
  }
  if (CUresult r = d->cuInit(0); r != CUDA_SUCCESS) {
    why = d->describe(r, "cuInit", "") + " (" + lib.path() + ")";
    return nullptr;
  }
  return d;
}

}  // namespace metile::runtime::cuda
