// The cuda device. The loaders, error messages, cubin cache, NVRTC compiles and device
// choice are checked on any machine (NVRTC is installed wherever CI runs); the tests that
// launch hand-written CUDA kernels run where the cuda device is available (the H200).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "metile/runtime/cuda/cubin_cache.h"
#include "metile/runtime/cuda/cuda_device.h"
#include "metile/runtime/cuda/driver_api.h"
#include "metile/runtime/cuda/nvrtc.h"
#include "metile/runtime/devices.h"
#include "metile/runtime/kernel_errors.h"
#include "metile/support/errors.h"
#include "metile/support/hash.h"

namespace metile::runtime::cuda {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

// y = a * x + y over n elements; the entry is extern "C" as the dialect emits it.
constexpr const char* kScaleAdd = R"(
extern "C" __global__ void scale_add(const float* x, float* y, float a, unsigned n) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

codegen::KernelABI scale_add_abi() {
  using codegen::AbiParam;
  codegen::KernelABI abi;
  abi.kernel_name = "scale_add";
  abi.body_name = "scale_add_body";
  abi.params = {{"x", AbiParam::Kind::Buffer, ir::DType::f32, "read"},
                {"y", AbiParam::Kind::Buffer, ir::DType::f32, "read_write"},
                {"a", AbiParam::Kind::Scalar, ir::DType::f32, ""},
                {"n", AbiParam::Kind::Scalar, ir::DType::u32, ""}};
  abi.threads_per_threadgroup = {128, 1, 1};
  return abi;
}

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// -- loaders and messages (no GPU needed) ----------------------------------------------

TEST(CudaLoaders, AMissingLibcudaIsReportedWithThePathsTried) {
  std::string why;
  EXPECT_EQ(DriverApi::load({"/nonexistent/libcuda.so.1"}, why), nullptr);
  EXPECT_THAT(why, HasSubstr("libcuda cannot be loaded"));
  EXPECT_THAT(why, HasSubstr("/nonexistent/libcuda.so.1"));
}

TEST(CudaLoaders, TheOverrideVariableReplacesTheDefaultPaths) {
  ScopedEnv env("METILE_LIBCUDA_LIBRARY", "/nonexistent/libcuda.so");
  EXPECT_EQ(DriverApi::default_candidates(), std::vector<std::string>{"/nonexistent/libcuda.so"});
  ScopedEnv nvrtc_env("METILE_NVRTC_LIBRARY", "/nonexistent/libnvrtc.so");
  std::string why;
  EXPECT_EQ(Nvrtc::load(Nvrtc::default_candidates(), why), nullptr);
  EXPECT_THAT(why, HasSubstr("/nonexistent/libnvrtc.so"));
}

TEST(CudaLoaders, TheStubLibcudaLoadsButCannotInitialise) {
  const char* stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (!fs::exists(stub)) GTEST_SKIP() << "no CUDA toolkit stub library here";
  std::string why;
  EXPECT_EQ(DriverApi::load({stub}, why), nullptr);
  EXPECT_THAT(why, HasSubstr("cuInit failed: CUDA_ERROR_STUB_LIBRARY"));
  EXPECT_THAT(why, HasSubstr(stub));
}

TEST(CudaErrors, MessagesNameTheCallTheErrorAndTheKernel) {
  EXPECT_EQ(cuda_error_message("cuLaunchKernel", "CUDA_ERROR_INVALID_VALUE", "invalid argument",
                               "vector_add"),
            "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid argument) [kernel "
            "vector_add]");
  EXPECT_EQ(cuda_error_message("cuMemAlloc", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory", ""),
            "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)");
}

TEST(CudaErrors, KernelFaultsAreStickyAndLaunchConfigurationErrorsAreNot) {
  EXPECT_TRUE(is_sticky_error(700));   // illegal address
  EXPECT_TRUE(is_sticky_error(716));   // misaligned address
  EXPECT_FALSE(is_sticky_error(1));    // invalid value
  EXPECT_FALSE(is_sticky_error(701));  // too many resources requested for launch
}

TEST(CudaErrors, AFaultNamesTheLastKernelLaunchedAndSaysWhenItSurfacedLater) {
  const std::string own = kernel_fault_message(
      "scale_add", "scale_add", "cuEventSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_THAT(own, HasSubstr("kernel 'scale_add' faulted on the GPU: cuEventSynchronize failed"));
  EXPECT_THAT(own, ::testing::Not(HasSubstr("last kernel")));
  EXPECT_THAT(own, HasSubstr("every later CUDA call in this process fails, restart it"));
  // An asynchronous launch's fault, seen by the next call that waits.
  const std::string later =
      kernel_fault_message("scale_add", "", "cuCtxSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS");
  EXPECT_THAT(later, HasSubstr("kernel 'scale_add' faulted on the GPU: cuCtxSynchronize failed"));
  EXPECT_THAT(later, HasSubstr("It is the last kernel meTile launched"));
  EXPECT_THAT(kernel_fault_message("", "", "cuMemcpyDtoH failed: CUDA_ERROR_ILLEGAL_ADDRESS"),
              ::testing::StartsWith("a kernel faulted on the GPU: cuMemcpyDtoH failed"));
}

TEST(CudaArchitecture, HopperGetsTheArchSpecificVariant) {
  EXPECT_EQ(gpu_architecture(9, 0, NvrtcOutput::Cubin), "sm_90a");
  EXPECT_EQ(gpu_architecture(9, 0, NvrtcOutput::Ptx), "compute_90a");
  EXPECT_EQ(gpu_architecture(8, 0, NvrtcOutput::Cubin), "sm_80");
}

TEST(CudaArchitecture, OptionsNeverRelaxPrecision) {
  const std::vector<std::string> options = nvrtc_options("sm_90a");
  EXPECT_THAT(options, ::testing::Contains("--gpu-architecture=sm_90a"));
  EXPECT_THAT(options, ::testing::Contains("-std=c++17"));
  EXPECT_THAT(options, ::testing::Not(::testing::Contains("--use_fast_math")));
}

// -- the cubin cache (no GPU needed) ---------------------------------------------------

TEST(CubinCache, TheKeyCoversSourceOptionsVersionAndArchitecture) {
  const std::string base = cubin_cache_key("src", {"-std=c++17"}, "13.0", "sm_90a");
  EXPECT_EQ(base, cubin_cache_key("src", {"-std=c++17"}, "13.0", "sm_90a"));
  EXPECT_NE(base, cubin_cache_key("src2", {"-std=c++17"}, "13.0", "sm_90a"));
  EXPECT_NE(base, cubin_cache_key("src", {"-std=c++20"}, "13.0", "sm_90a"));
  EXPECT_NE(base, cubin_cache_key("src", {"-std=c++17"}, "13.1", "sm_90a"));
  EXPECT_NE(base, cubin_cache_key("src", {"-std=c++17"}, "13.0", "sm_100a"));
}

class CubinCacheDir : public ::testing::Test {
 protected:
  // A cache root of its own, the cubins in its folder "cuda" (as under cache_root()).
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("metile-cubin-test-" + std::to_string(getpid()));
    dir_ = root_ / "cuda";
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  fs::path root_, dir_;
};

TEST_F(CubinCacheDir, BuildsOnceThenHitsAndLeavesNoTemporaries) {
  const CubinCache cache(dir_);
  int builds = 0;
  auto build = [&] {
    ++builds;
    return std::string("cubin bytes\0with a NUL", 21);
  };
  bool hit = true;
  EXPECT_EQ(cache.get_or_build("k.cubin", build, &hit).size(), 21u);
  EXPECT_FALSE(hit);
  EXPECT_EQ(cache.get_or_build("k.cubin", build, &hit), std::string("cubin bytes\0with a NUL", 21));
  EXPECT_TRUE(hit);
  EXPECT_EQ(builds, 1);
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir_)) files.push_back(e.path().filename());
  // The entry, its checksum and its lock (which stays: removing it would let a process that
  // opened it before lock a file no other process sees).
  EXPECT_THAT(files, ::testing::UnorderedElementsAre("k.cubin", "k.cubin.sum", "k.cubin.lock"));
}

TEST_F(CubinCacheDir, ACorruptEntryIsRebuilt) {
  const CubinCache cache(dir_);
  int builds = 0;
  auto build = [&] {
    ++builds;
    return std::string("the real cubin");
  };
  cache.get_or_build("k.cubin", build);
  std::ofstream(dir_ / "k.cubin", std::ios::trunc) << "the real cu";  // truncated
  bool hit = true;
  EXPECT_EQ(cache.get_or_build("k.cubin", build, &hit), "the real cubin");
  EXPECT_FALSE(hit);
  EXPECT_EQ(builds, 2);
  EXPECT_EQ(cache.get_or_build("k.cubin", build, &hit), "the real cubin");
  EXPECT_TRUE(hit);
}

// A cubin is code the GPU runs: one forged with a recomputed checksum (the plain content hash
// of before, which anyone can compute) is rebuilt; a cache folder others may write to is not
// used (tests/runtime/disk_cache_test.cc tests the rest of the trust checks).
TEST_F(CubinCacheDir, ACubinForgedWithARecomputedChecksumIsRebuilt) {
  const CubinCache cache(dir_);
  auto build = [] { return std::string("the real cubin"); };
  cache.get_or_build("k.cubin", build);
  std::ofstream(dir_ / "k.cubin", std::ios::trunc) << "forged";
  std::ofstream(dir_ / "k.cubin.sum", std::ios::trunc) << "k.cubin\n" + content_hash("forged");
  bool hit = true;
  EXPECT_EQ(cache.get_or_build("k.cubin", build, &hit), "the real cubin");
  EXPECT_FALSE(hit);
}

TEST_F(CubinCacheDir, AFolderOthersMayWriteToIsNotUsed) {
  const CubinCache cache(dir_);
  auto build = [] { return std::string("the real cubin"); };
  cache.get_or_build("k.cubin", build);
  fs::permissions(dir_, fs::perms(0777));
  std::ofstream(dir_ / "k.cubin", std::ios::trunc) << "planted";
  bool hit = true;
  EXPECT_EQ(cache.get_or_build("k.cubin", build, &hit), "the real cubin");
  EXPECT_FALSE(hit);
  EXPECT_EQ(cache.get_or_build("other.cubin", build, &hit), "the real cubin");
  EXPECT_FALSE(fs::exists(dir_ / "other.cubin"));  // nothing written there
  fs::permissions(dir_, fs::perms(0700));
}

// -- NVRTC (installed here and on CI) --------------------------------------------------

// NVRTC, after REQUIRE_NVRTC() skipped the test where it is missing.
const Nvrtc& nvrtc() {
  return *Nvrtc::shared();
}

#define REQUIRE_NVRTC()                                                          \
  do {                                                                           \
    std::string why;                                                             \
    if (!Nvrtc::shared(&why)) GTEST_SKIP() << "NVRTC is not available: " << why; \
  } while (0)

TEST(Nvrtc, CompilesAKernelToPtx) {
  REQUIRE_NVRTC();
  const Nvrtc& nvrtc = cuda::nvrtc();
  EXPECT_THAT(nvrtc.version(), ::testing::MatchesRegex("[0-9]+\\.[0-9]+"));
  const std::string ptx =
      nvrtc.compile(kScaleAdd, "scale_add", nvrtc_options(gpu_architecture(9, 0, NvrtcOutput::Ptx)),
                    NvrtcOutput::Ptx);
  EXPECT_THAT(ptx, HasSubstr(".entry scale_add"));
  EXPECT_THAT(ptx, HasSubstr(".target sm_90a"));
}

TEST(Nvrtc, CompilesACubinForTheH200) {
  REQUIRE_NVRTC();
  const std::string cubin =
      nvrtc().compile(kScaleAdd, "scale_add", nvrtc_options("sm_90a"), NvrtcOutput::Cubin);
  ASSERT_GE(cubin.size(), 4u);
  EXPECT_EQ(cubin.substr(0, 4),
            "\x7f"
            "ELF");
}

TEST(Nvrtc, TheHalfAndBfloatHeadersAreFound) {
  REQUIRE_NVRTC();
  const char* source = R"(
#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern "C" __global__ void widen(const __half* x, const __nv_bfloat16* y, float* out) {
  out[threadIdx.x] = __half2float(x[threadIdx.x]) + __bfloat162float(y[threadIdx.x]);
}
)";
  EXPECT_THAT(nvrtc().compile(source, "widen", nvrtc_options("compute_90a"), NvrtcOutput::Ptx),
              HasSubstr(".entry widen"));
}

TEST(Nvrtc, ACompileErrorIsAnInternalErrorWithTheLogAndTheSource) {
  REQUIRE_NVRTC();
  const char* source = "extern \"C\" __global__ void broken(float* x) { x[0] = undeclared; }\n";
  try {
    nvrtc().compile(source, "broken", nvrtc_options("compute_90a"), NvrtcOutput::Ptx);
    FAIL() << "the broken source compiled";
  } catch (const InternalError& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, HasSubstr("kernel 'broken'"));
    EXPECT_THAT(message, HasSubstr("undeclared"));  // NVRTC's log
    EXPECT_THAT(message, HasSubstr("--- source ---\n" + std::string(source)));
  }
}

// -- device choice ---------------------------------------------------------------------

TEST(DeviceChoice, CudaIsTheDefaultExactlyWhenAGpuIsPresent) {
  ScopedEnv env("METILE_DEVICE", nullptr);
  const std::string why = device_unavailable_reason("cuda");
  if (why.empty()) {
    EXPECT_EQ(default_device().name(), "cuda");
    return;
  }
  EXPECT_EQ(default_device().name(), "host");
  EXPECT_EQ(find_device("cuda"), nullptr);
  try {
    get_device("cuda");
    FAIL() << "get_device(\"cuda\") worked without a GPU";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("device 'cuda' is not available on this machine: " + why));
  }
}

TEST(DeviceChoice, MetileDeviceOverridesTheDefault) {
  {
    ScopedEnv env("METILE_DEVICE", "host");
    EXPECT_EQ(default_device().name(), "host");
  }
  {
    ScopedEnv env("METILE_DEVICE", "tpu");
    EXPECT_THROW(default_device(), UserError);
  }
  if (!device_unavailable_reason("cuda").empty()) {
    ScopedEnv env("METILE_DEVICE", "cuda");
    EXPECT_THROW(default_device(), UserError);
  }
}

// -- on a GPU --------------------------------------------------------------------------

class OnTheGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!find_device("cuda")) GTEST_SKIP() << device_unavailable_reason("cuda");
  }
  Device& gpu() { return get_device("cuda"); }
};

TEST_F(OnTheGpu, AHandWrittenKernelRunsAndIsTimed) {
  EXPECT_EQ(gpu().target().name, "sm90");
  const codegen::KernelABI abi = scale_add_abi();
  std::shared_ptr<const Module> module = gpu().compile(kScaleAdd, abi);
  const int n = 1000;
  std::vector<float> x(n), y(n, 1.0f);
  for (int i = 0; i < n; ++i) x[i] = float(i);
  Buffer dx = gpu().allocate(ir::DType::f32, {n}), dy = gpu().allocate(ir::DType::f32, {n});
  EXPECT_EQ(dx.storage().host_data(), nullptr);
  dx.copy_from_host(x.data(), n * sizeof(float));
  dy.copy_from_host(y.data(), n * sizeof(float));
  const KernelArg args[] = {dx, dy, 2.0f, uint32_t(n)};
  const LaunchTiming timing = gpu().launch(*module, {8, 1, 1}, args);
  EXPECT_GT(timing.elapsed_ms, 0.0);
  dy.copy_to_host(y.data(), n * sizeof(float));
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[999], 1999.0f);
}

TEST_F(OnTheGpu, ALaunchThatDoesNotWaitIsQueuedUntimedAndSynchronizeWaitsForIt) {
  std::shared_ptr<const Module> module = gpu().compile(kScaleAdd, scale_add_abi());
  const int n = 1 << 20;
  std::vector<float> ones(n, 1.0f), y(n);
  Buffer dx = gpu().allocate(ir::DType::f32, {n}), dy = gpu().allocate(ir::DType::f32, {n});
  dx.copy_from_host(ones.data(), n * sizeof(float));
  dy.copy_from_host(ones.data(), n * sizeof(float));
  const KernelArg args[] = {dx, dy, 2.0f, uint32_t(n)};
  LaunchOptions queued;
  queued.wait = false;
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(gpu().launch(*module, {n / 128, 1, 1}, args, queued).elapsed_ms, 0.0);
  gpu().synchronize();
  dy.copy_to_host(y.data(), n * sizeof(float));
  EXPECT_EQ(y[0], 7.0f);
  EXPECT_EQ(y[n - 1], 7.0f);
}

TEST_F(OnTheGpu, ABadLaunchConfigurationRaisesAtTheCallEvenWithoutWaiting) {
  // 65536 blocks in y: one more than the driver allows (the module itself is fine, so only
  // cuLaunchKernel can refuse it; metile::launch's own grid check is not on this path).
  std::shared_ptr<const Module> module = gpu().compile(kScaleAdd, scale_add_abi());
  Buffer d = gpu().allocate(ir::DType::f32, {16});
  const KernelArg args[] = {d, d, 1.0f, uint32_t(16)};
  LaunchOptions queued;
  queued.wait = false;
  try {
    gpu().launch(*module, {1, 65536, 1}, args, queued);
    FAIL() << "a grid of 65536 blocks in y was launched";
  } catch (const KernelFaultError& e) {
    FAIL() << "a configuration error is not a kernel fault: " << e.what();
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cuLaunchKernel failed: CUDA_ERROR_"));
    EXPECT_THAT(e.what(), HasSubstr("[kernel scale_add]"));
  }
}

TEST_F(OnTheGpu, TooManyThreadsPerBlockIsOutOfResourcesBeforeAnyLaunch) {
  codegen::KernelABI abi = scale_add_abi();
  abi.threads_per_threadgroup = {2048, 1, 1};  // above the 1024 threads a block may have
  try {
    gpu().compile(kScaleAdd, abi);
    FAIL() << "a module for blocks of 2048 threads was built";
  } catch (const OutOfResources& e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel 'scale_add' runs 2048 threads per block"));
    EXPECT_THAT(e.what(), HasSubstr("at most 1024"));
  }
}

TEST_F(OnTheGpu, AMissingEntryIsAnInternalErrorNamingIt) {
  // The cubin loads, the lookup fails; the loaded module is unloaded on the way out.
  codegen::KernelABI abi = scale_add_abi();
  abi.kernel_name = "no_such_entry";
  try {
    gpu().compile(kScaleAdd, abi);
    FAIL() << "a missing entry was found";
  } catch (const InternalError& e) {
    EXPECT_THAT(e.what(), HasSubstr("cuModuleGetFunction failed"));
    EXPECT_THAT(e.what(), HasSubstr("extern \"C\" __global__"));
  }
}

TEST_F(OnTheGpu, WrappedMemoryIsUsedInPlaceAndNotFreed) {
  Buffer owner = gpu().allocate(ir::DType::f32, {256});
  const std::vector<float> ones(256, 1.0f);
  owner.copy_from_host(ones.data(), 256 * sizeof(float));
  const auto address = static_cast<const CudaBufferStorage&>(owner.storage()).address();
  {
    Buffer view = gpu().wrap(address, 256 * sizeof(float)).with_metadata(ir::DType::f32, {256});
    std::shared_ptr<const Module> module = gpu().compile(kScaleAdd, scale_add_abi());
    const KernelArg args[] = {view, view, 1.0f, uint32_t(256)};
    gpu().launch(*module, {2, 1, 1}, args);
  }  // the wrapper is gone; the memory is still the owner's
  std::vector<float> out(256);
  owner.copy_to_host(out.data(), 256 * sizeof(float));
  EXPECT_EQ(out[255], 2.0f);
}

TEST_F(OnTheGpu, AHostBufferIsRejectedNamingTheParameter) {
  std::shared_ptr<const Module> module = gpu().compile(kScaleAdd, scale_add_abi());
  Buffer on_host = get_device("host").allocate(ir::DType::f32, {128});
  Buffer dy = gpu().allocate(ir::DType::f32, {128});
  const KernelArg args[] = {on_host, dy, 1.0f, uint32_t(128)};
  try {
    gpu().launch(*module, {1, 1, 1}, args);
    FAIL() << "a host buffer was launched on the GPU";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("parameter 0 ('x') is a buffer on device 'host'"));
  }
}

TEST_F(OnTheGpu, TooMuchSharedMemoryIsAUserError) {
  codegen::KernelABI abi = scale_add_abi();
  abi.threadgroup_bytes = 1 << 20;
  EXPECT_THROW(gpu().compile(kScaleAdd, abi), UserError);
}

// -- on two GPUs -----------------------------------------------------------------------

class OnTwoGpus : public OnTheGpu {
 protected:
  void SetUp() override {
    OnTheGpu::SetUp();
    if (IsSkipped()) return;
    if (cuda_device().gpu_count() < 2)
      GTEST_SKIP() << "needs a second GPU; the driver reports " << cuda_device().gpu_count();
  }
  // A buffer allocated with GPU `ordinal`'s context current (as torch.cuda.set_device
  // leaves it); the thread's context is none again after.
  Buffer on_gpu(int ordinal, int64_t n) {
    const DriverApi& api = cuda_device().api();
    EXPECT_EQ(api.cuCtxSetCurrent(cuda_device().gpu(ordinal).context()), CUDA_SUCCESS);
    Buffer b = gpu().allocate(ir::DType::f32, {n});
    EXPECT_EQ(api.cuCtxSetCurrent(nullptr), CUDA_SUCCESS);
    return b;
  }
};

TEST_F(OnTwoGpus, AKernelRunsOnTheSecondGpuWhereItsBuffersAre) {
  std::shared_ptr<const Module> module = gpu().compile(kScaleAdd, scale_add_abi());
  const int n = 1000;
  std::vector<float> x(n), y(n, 1.0f);
  for (int i = 0; i < n; ++i) x[i] = float(i);
  Buffer dx = on_gpu(1, n), dy = on_gpu(1, n);
  EXPECT_EQ(static_cast<const CudaBufferStorage&>(dx.storage()).gpu().ordinal(), 1);
  dx.copy_from_host(x.data(), n * sizeof(float));
  dy.copy_from_host(y.data(), n * sizeof(float));
  const KernelArg args[] = {dx, dy, 2.0f, uint32_t(n)};
  EXPECT_GT(gpu().launch(*module, {8, 1, 1}, args).elapsed_ms, 0.0);
  dy.copy_to_host(y.data(), n * sizeof(float));
  EXPECT_EQ(y[0], 1.0f);
  EXPECT_EQ(y[999], 1999.0f);
  // Wrapped memory of GPU 1 (a torch tensor's) is placed there by the driver.
  const auto address = static_cast<const CudaBufferStorage&>(dy.storage()).address();
  Buffer view = gpu().wrap(address, n * sizeof(float));
  EXPECT_EQ(static_cast<const CudaBufferStorage&>(view.storage()).gpu().ordinal(), 1);
  gpu().synchronize_gpu(1);
}

TEST_F(OnTwoGpus, BuffersOnTwoGpusAreAnErrorNamingThem) {
  std::shared_ptr<const Module> module = gpu().compile(kScaleAdd, scale_add_abi());
  Buffer dx = on_gpu(0, 128), dy = on_gpu(1, 128);
  const KernelArg args[] = {dx, dy, 1.0f, uint32_t(128)};
  try {
    gpu().launch(*module, {1, 1, 1}, args);
    FAIL() << "a launch over two GPUs ran";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel 'scale_add' has buffer arguments on different GPUs: "
                                    "'x' on cuda:0; 'y' on cuda:1"));
  }
}

// Launches a kernel that stores through a wild pointer (waiting for it, or not and then
// synchronising); exits 3 with the fault's message.
void launch_wild_store(bool wait) {
  const char* source = R"(
extern "C" __global__ void wild_store(float* y, float a, unsigned n) {
  ((float*)0x10)[threadIdx.x * 4096] = a;
}
)";
  codegen::KernelABI abi = scale_add_abi();
  abi.kernel_name = "wild_store";
  abi.params.erase(abi.params.begin());
  Device& gpu = get_device("cuda");
  std::shared_ptr<const Module> module = gpu.compile(source, abi);
  Buffer y = gpu.allocate(ir::DType::f32, {128});
  const KernelArg args[] = {y, 1.0f, uint32_t(128)};
  LaunchOptions options;
  options.wait = wait;
  try {
    gpu.launch(*module, {1, 1, 1}, args, options);
    gpu.synchronize();
  } catch (const KernelFaultError& e) {
    fprintf(stderr, "%s\n", e.what());
    exit(3);
  }
  exit(0);
}

// A fault leaves the context unusable, so it runs in a child process (re-executed: the
// driver does not survive a fork).
TEST_F(OnTheGpu, AFaultNamesTheKernelAndDoesNotHang) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(launch_wild_store(true), ::testing::ExitedWithCode(3),
              "kernel 'wild_store' faulted on the GPU: cuEventSynchronize .*CUDA_ERROR_");
}

TEST_F(OnTheGpu, AnAsynchronousFaultSurfacesAtSynchronizeNamingTheKernel) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(launch_wild_store(false), ::testing::ExitedWithCode(3),
              "kernel 'wild_store' faulted on the GPU: .*CUDA_ERROR_.*It is the last kernel "
              "meTile launched");
}

}  // namespace
}  // namespace metile::runtime::cuda
