// A stand-in for libcuda with several GPUs, for testing the cuda device's per-GPU logic on
// machines without one (cuda_several_gpus_test.cc loads it through METILE_LIBCUDA_LIBRARY).
// It keeps what the real driver keeps per thread and per context, and refuses what the real
// driver refuses: a function launched, or a context's memory freed, while another context is
// current. Memory is host memory, so copies work; kernels are recorded, not run.
//
// FAKE_CUDA_CAPABILITIES lists the GPUs' compute capabilities ("90,90,80": three GPUs, the
// third an sm_80); two sm_90 GPUs by default. fake_cuda_* functions let the test read what
// happened.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

namespace {

using CUresult = int;
constexpr CUresult kSuccess = 0, kInvalidValue = 1, kNotInitialized = 3, kInvalidContext = 201,
                   kInvalidHandle = 400;

struct Context {
  int ordinal;
};
struct Module {
  Context* context;
};
struct Function {
  Module* module;
  std::string name;
};
struct Allocation {
  int ordinal;
  std::size_t bytes;
  std::unique_ptr<unsigned char[]> memory;
};

struct Driver {
  std::mutex mutex;
  bool initialised = false;
  std::vector<int> capabilities;  // major * 10 + minor, by ordinal
  std::vector<std::unique_ptr<Context>> contexts;
  std::vector<std::unique_ptr<Module>> modules;
  std::vector<std::unique_ptr<Function>> functions;
  std::map<unsigned long long, Allocation> allocations;  // by address
  std::vector<int> launches, synchronizations;           // per ordinal
  std::vector<unsigned long long> launch_streams;
  int wrong_context_calls = 0;
};

Driver& driver() {
  static Driver* d = new Driver;
  return *d;
}

thread_local Context* current = nullptr;

std::vector<int> capabilities_from_environment() {
  std::vector<int> result;
  const char* text = std::getenv("FAKE_CUDA_CAPABILITIES");
  std::stringstream list(text && *text ? text : "90,90");
  for (std::string item; std::getline(list, item, ',');) result.push_back(std::stoi(item));
  return result;
}

bool valid_ordinal(int ordinal) {
  return ordinal >= 0 && ordinal < static_cast<int>(driver().capabilities.size());
}

// The allocation holding `address`, or nullptr.
Allocation* allocation_of(unsigned long long address) {
  auto& all = driver().allocations;
  auto it = all.upper_bound(address);
  if (it == all.begin()) return nullptr;
  --it;
  return address < it->first + it->second.bytes ? &it->second : nullptr;
}

}  // namespace

extern "C" {

CUresult cuGetErrorName(CUresult r, const char** name) {
  *name = r == kInvalidContext ? "CUDA_ERROR_INVALID_CONTEXT" : "CUDA_ERROR_FAKE";
  return kSuccess;
}
CUresult cuGetErrorString(CUresult, const char** text) {
  *text = "an error of the fake driver";
  return kSuccess;
}
CUresult cuInit(unsigned) {
  std::lock_guard lock(driver().mutex);
  if (!driver().initialised) {
    driver().capabilities = capabilities_from_environment();
    for (std::size_t i = 0; i < driver().capabilities.size(); ++i)
      driver().contexts.push_back(std::make_unique<Context>(Context{static_cast<int>(i)}));
    driver().launches.assign(driver().capabilities.size(), 0);
    driver().synchronizations.assign(driver().capabilities.size(), 0);
    driver().initialised = true;
  }
  return kSuccess;
}
CUresult cuDriverGetVersion(int* version) {
  *version = 12040;
  return kSuccess;
}
CUresult cuDeviceGetCount(int* count) {
  *count = static_cast<int>(driver().capabilities.size());
  return driver().initialised ? kSuccess : kNotInitialized;
}
CUresult cuDeviceGet(int* device, int ordinal) {
  if (!valid_ordinal(ordinal)) return kInvalidValue;
  *device = ordinal;
  return kSuccess;
}
CUresult cuDeviceGetName(char* name, int length, int device) {
  std::snprintf(name, static_cast<std::size_t>(length), "Fake GPU %d", device);
  return kSuccess;
}
CUresult cuDeviceGetAttribute(int* value, int attribute, int device) {
  if (!valid_ordinal(device)) return kInvalidValue;
  const int capability = driver().capabilities[static_cast<std::size_t>(device)];
  switch (attribute) {
    case 75:  // compute capability major
      *value = capability / 10;
      break;
    case 76:  // minor
      *value = capability % 10;
      break;
    case 16:  // multiprocessors: they differ per GPU
      *value = 132 - device;
      break;
    case 97:  // opt-in shared memory per block
      *value = 232448 - 1024 * device;
      break;
    case 12:  // registers per block
      *value = 65536;
      break;
    default:
      return kInvalidValue;
  }
  return kSuccess;
}
CUresult cuDevicePrimaryCtxRetain(Context** context, int device) {
  if (!valid_ordinal(device)) return kInvalidValue;
  *context = driver().contexts[static_cast<std::size_t>(device)].get();
  return kSuccess;
}
CUresult cuCtxSetCurrent(Context* context) {
  current = context;
  return kSuccess;
}
CUresult cuCtxGetCurrent(Context** context) {
  *context = current;
  return kSuccess;
}
CUresult cuCtxGetDevice(int* device) {
  if (!current) return kInvalidContext;
  *device = current->ordinal;
  return kSuccess;
}
CUresult cuCtxSynchronize() {
  if (!current) return kInvalidContext;
  std::lock_guard lock(driver().mutex);
  ++driver().synchronizations[static_cast<std::size_t>(current->ordinal)];
  return kSuccess;
}
CUresult cuModuleLoadData(Module** module, const void*) {
  if (!current) return kInvalidContext;
  std::lock_guard lock(driver().mutex);
  driver().modules.push_back(std::make_unique<Module>(Module{current}));
  *module = driver().modules.back().get();
  return kSuccess;
}
CUresult cuModuleUnload(Module* module) {
  if (current != module->context) {
    ++driver().wrong_context_calls;
    return kInvalidContext;
  }
  return kSuccess;
}
CUresult cuModuleGetFunction(Function** function, Module* module, const char* name) {
  std::lock_guard lock(driver().mutex);
  driver().functions.push_back(std::make_unique<Function>(Function{module, name}));
  *function = driver().functions.back().get();
  return kSuccess;
}
CUresult cuFuncSetAttribute(Function*, int, int) {
  return kSuccess;
}
CUresult cuFuncGetAttribute(int* value, int attribute, Function*) {
  *value = attribute == 0 ? 1024 : attribute == 4 ? 32 : 0;  // threads, registers; no static shared
  return kSuccess;
}
// Called with each launch's kernel parameters, so that a test can read what the launch passed
// and write what a kernel would (fake_cuda_on_launch).
using LaunchHook = void (*)(void** params);
static LaunchHook launch_hook = nullptr;

CUresult cuLaunchKernel(Function* function, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, void* stream, void** params, void**) {
  LaunchHook hook = nullptr;
  {
    std::lock_guard lock(driver().mutex);
    // The real driver refuses a function of another context than the current one.
    if (current != function->module->context) {
      ++driver().wrong_context_calls;
      return kInvalidHandle;
    }
    ++driver().launches[static_cast<std::size_t>(current->ordinal)];
    driver().launch_streams.push_back(reinterpret_cast<unsigned long long>(stream));
    hook = launch_hook;
  }
  if (hook) hook(params);
  return kSuccess;
}
CUresult cuMemAlloc_v2(unsigned long long* address, std::size_t bytes) {
  if (!current) return kInvalidContext;
  std::lock_guard lock(driver().mutex);
  Allocation a{current->ordinal, bytes, std::make_unique<unsigned char[]>(bytes)};
  *address = reinterpret_cast<unsigned long long>(a.memory.get());
  driver().allocations.emplace(*address, std::move(a));
  return kSuccess;
}
CUresult cuMemFree_v2(unsigned long long address) {
  std::lock_guard lock(driver().mutex);
  auto it = driver().allocations.find(address);
  if (it == driver().allocations.end()) return kInvalidValue;
  if (!current || current->ordinal != it->second.ordinal) {
    ++driver().wrong_context_calls;
    return kInvalidContext;
  }
  driver().allocations.erase(it);
  return kSuccess;
}
CUresult cuMemcpyHtoD_v2(unsigned long long dst, const void* src, std::size_t bytes) {
  std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
  return current ? kSuccess : kInvalidContext;
}
CUresult cuMemcpyDtoH_v2(void* dst, unsigned long long src, std::size_t bytes) {
  std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
  return current ? kSuccess : kInvalidContext;
}
CUresult cuPointerGetAttribute(void* data, int attribute, unsigned long long address) {
  std::lock_guard lock(driver().mutex);
  const Allocation* a = allocation_of(address);
  if (attribute != 9 || !a) return kInvalidValue;  // CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL
  *static_cast<int*>(data) = a->ordinal;
  return kSuccess;
}
CUresult cuStreamSynchronize(void*) {
  return kSuccess;
}
CUresult cuEventCreate(void** event, unsigned) {
  static int events;
  *event = &events;
  return current ? kSuccess : kInvalidContext;
}
CUresult cuEventDestroy_v2(void*) {
  return kSuccess;
}
CUresult cuEventRecord(void*, void*) {
  return kSuccess;
}
CUresult cuEventSynchronize(void*) {
  return kSuccess;
}
CUresult cuEventElapsedTime(float* ms, void*, void*) {
  *ms = 0.5f;
  return kSuccess;
}

// What happened, for the test.
int fake_cuda_launches(int ordinal) {
  std::lock_guard lock(driver().mutex);
  return driver().launches[static_cast<std::size_t>(ordinal)];
}
int fake_cuda_synchronizations(int ordinal) {
  std::lock_guard lock(driver().mutex);
  return driver().synchronizations[static_cast<std::size_t>(ordinal)];
}
unsigned long long fake_cuda_last_launch_stream() {
  std::lock_guard lock(driver().mutex);
  return driver().launch_streams.empty() ? 0 : driver().launch_streams.back();
}
int fake_cuda_wrong_context_calls() {
  std::lock_guard lock(driver().mutex);
  return driver().wrong_context_calls;
}
// Makes GPU `ordinal`'s context current on the calling thread, as torch does for its
// current device (-1: none).
void fake_cuda_make_current(int ordinal) {
  current = ordinal < 0 ? nullptr : driver().contexts[static_cast<std::size_t>(ordinal)].get();
}
int fake_cuda_current() {
  return current ? current->ordinal : -1;
}
// Runs `hook` (nullptr: nothing) at every later launch, with its kernel parameters.
void fake_cuda_on_launch(LaunchHook hook) {
  std::lock_guard lock(driver().mutex);
  launch_hook = hook;
}
}
