// The CUDA driver API, loaded with dlopen (libcuda.so.1, or
// /usr/local/nvidia/lib64/libcuda.so.1; METILE_LIBCUDA_LIBRARY names one file instead). The
// few driver types, constants and functions meTile calls are declared here, so meTile
// needs no CUDA headers to build. Every failing call becomes an error naming the call, the
// CUDA error (cuGetErrorName / cuGetErrorString) and the kernel when there is one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "metile/runtime/cuda/shared_library.h"

namespace metile::runtime::cuda {

// The driver's types, with the layout of cuda.h.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12;
constexpr int CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9;
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr unsigned CU_EVENT_DEFAULT = 0;
// cuTensorMapEncodeTiled's enumerators (CUtensorMapDataType, ...Interleave, ...Swizzle,
// ...L2promotion, ...FloatOOBfill) that the TMA tensor maps use.
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6;
constexpr int CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9;
constexpr int CU_TENSOR_MAP_INTERLEAVE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2;
constexpr int CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0;  // reads past the edges give zeros

// Shared memory a block may use without the opt-in attribute.
constexpr std::int64_t kDefaultSharedMemoryBytes = 48 * 1024;

// "<call> failed: <name> (<description>) [kernel <kernel>]"; the kernel part only when
// `kernel` is not empty.
std::string cuda_error_message(std::string_view call, std::string_view name,
                               std::string_view description, std::string_view kernel);

// An error after which the CUDA context is unusable (a kernel fault: illegal address,
// illegal instruction, misaligned address, device assert, launch failure, ...).
bool is_sticky_error(CUresult result);

struct DriverApi {
  // The process-wide driver, loaded and initialised (cuInit) on first use; nullptr and
  // `why` set when libcuda cannot load or cuInit fails (no driver, stub library).
  static const DriverApi* shared(std::string* why = nullptr);
  static std::unique_ptr<DriverApi> load(const std::vector<std::string>& candidates,
                                         std::string& why);
  static std::vector<std::string> default_candidates();

  // The message of `result` as cuda_error_message writes it.
  std::string describe(CUresult result, std::string_view call, std::string_view kernel) const;

  SharedLibrary library;
  CUresult (*cuGetErrorName)(CUresult, const char**) = nullptr;
  CUresult (*cuGetErrorString)(CUresult, const char**) = nullptr;
  CUresult (*cuInit)(unsigned) = nullptr;
  CUresult (*cuDriverGetVersion)(int*) = nullptr;
  CUresult (*cuDeviceGetCount)(int*) = nullptr;
  CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
  CUresult (*cuDeviceGetName)(char*, int, CUdevice) = nullptr;
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice) = nullptr;
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
  CUresult (*cuCtxSetCurrent)(CUcontext) = nullptr;
  CUresult (*cuCtxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*cuCtxGetDevice)(CUdevice*) = nullptr;
  CUresult (*cuPointerGetAttribute)(void*, int, CUdeviceptr) = nullptr;
  CUresult (*cuCtxSynchronize)() = nullptr;
  CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*cuModuleUnload)(CUmodule) = nullptr;
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*cuFuncGetAttribute)(int*, int, CUfunction) = nullptr;
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void**, void**) = nullptr;
  CUresult (*cuMemAlloc)(CUdeviceptr*, std::size_t) = nullptr;
  CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, std::size_t) = nullptr;
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, std::size_t) = nullptr;
  CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
  CUresult (*cuEventCreate)(CUevent*, unsigned) = nullptr;
  CUresult (*cuEventDestroy)(CUevent) = nullptr;
  CUresult (*cuEventRecord)(CUevent, CUstream) = nullptr;
  CUresult (*cuEventSynchronize)(CUevent) = nullptr;
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent) = nullptr;
  // CUDA 12 and later (sm90's TMA); nullptr with an older driver, which kernels that need tensor
  // maps then report.
  CUresult (*cuTensorMapEncodeTiled)(void*, int, unsigned, void*, const std::uint64_t*,
                                     const std::uint64_t*, const std::uint32_t*,
                                     const std::uint32_t*, int, int, int, int) = nullptr;
};

}  // namespace metile::runtime::cuda
