// The cuda device's per-GPU logic on a driver with several GPUs, without a GPU: this
// program loads fake_libcuda (three GPUs, the third an sm_80) in place of libcuda. It checks
// where buffers go, which GPU a launch runs on, that each GPU loads a kernel into its own
// context and launches it there, and that the caller's current context is current again
// after every call. cuda_device_test.cc runs kernels on real GPUs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "metile/runtime/cuda/cuda_device.h"
#include "metile/runtime/cuda/nvrtc.h"
#include "metile/support/errors.h"

extern "C" {
int fake_cuda_launches(int ordinal);
int fake_cuda_synchronizations(int ordinal);
unsigned long long fake_cuda_last_launch_stream();
int fake_cuda_wrong_context_calls();
void fake_cuda_make_current(int ordinal);
int fake_cuda_current();
}

namespace metile::runtime::cuda {
namespace {

using ::testing::HasSubstr;

// Before main, so the driver the device loads is the fake one.
const bool kFakeDriver = [] {
  setenv("METILE_LIBCUDA_LIBRARY", METILE_FAKE_LIBCUDA, 1);
  setenv("FAKE_CUDA_CAPABILITIES", "90,90,80", 1);
  return true;
}();

// A PTX module: the fake driver loads any text, and the PTX route needs no NVRTC.
codegen::KernelABI copy_abi() {
  using codegen::AbiParam;
  codegen::KernelABI abi;
  abi.kernel_name = "copy";
  abi.body_name = "copy_body";
  abi.params = {{"src", AbiParam::Kind::Buffer, ir::DType::f32, "read"},
                {"dst", AbiParam::Kind::Buffer, ir::DType::f32, "write"},
                {"n", AbiParam::Kind::Scalar, ir::DType::u32, ""}};
  abi.threads_per_threadgroup = {128, 1, 1};
  abi.source_is_ptx = true;
  return abi;
}

class SeveralGpus : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kFakeDriver);
    ASSERT_EQ(cuda_unavailable_reason(), "");
    fake_cuda_make_current(-1);
  }
  CudaDevice& device() { return cuda_device(); }
  Buffer on_gpu(int ordinal, int64_t n) {
    fake_cuda_make_current(ordinal);  // as torch.cuda.set_device(ordinal) leaves it
    Buffer b = device().allocate(ir::DType::f32, {n});
    fake_cuda_make_current(-1);
    return b;
  }
};

TEST_F(SeveralGpus, EveryVisibleGpuIsADeviceOfItsOwn) {
  EXPECT_EQ(device().gpu_count(), 3);
  EXPECT_EQ(device().gpu(1).ordinal(), 1);
  EXPECT_EQ(device().gpu(1).description(), "GPU 1 (Fake GPU 1, compute capability 9.0)");
  // Each GPU's limits are its own.
  EXPECT_EQ(device().gpu(0).limits().multiprocessors, 132);
  EXPECT_EQ(device().gpu(1).limits().multiprocessors, 131);
  EXPECT_EQ(device().gpu(1).limits().max_shared_optin, 232448 - 1024);
  EXPECT_EQ(device().gpu(1).limits().max_registers_per_block, 65536);
  EXPECT_EQ(&device().gpu(1), &device().gpu(1));  // opened once
  try {
    device().gpu(3);
    FAIL() << "GPU 3 was opened";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("there is no GPU cuda:3; the driver reports 3"));
  }
}

TEST_F(SeveralGpus, BuffersGoToTheCurrentGpuAndWrappedMemoryToItsOwn) {
  Buffer b = on_gpu(1, 16);
  EXPECT_EQ(static_cast<const CudaBufferStorage&>(b.storage()).gpu().ordinal(), 1);
  // No current context: GPU 0.
  Buffer a = device().allocate(ir::DType::f32, {16});
  EXPECT_EQ(static_cast<const CudaBufferStorage&>(a.storage()).gpu().ordinal(), 0);
  // Wrapped memory (a torch tensor's) is on the GPU the driver says, whatever is current.
  const auto address = static_cast<const CudaBufferStorage&>(b.storage()).address();
  Buffer view = device().wrap(address + 8, 8);
  EXPECT_EQ(static_cast<const CudaBufferStorage&>(view.storage()).gpu().ordinal(), 1);
  EXPECT_THROW(device().wrap(0x1234, 4), UserError);  // not GPU memory
  // Copies work from any thread context, and leave it as they found it.
  const std::vector<float> in(16, 3.0f);
  std::vector<float> out(16);
  fake_cuda_make_current(0);
  b.copy_from_host(in.data(), in.size() * sizeof(float));
  b.copy_to_host(out.data(), out.size() * sizeof(float));
  EXPECT_EQ(out, in);
  EXPECT_EQ(fake_cuda_current(), 0);
}

TEST_F(SeveralGpus, ALaunchRunsOnItsBuffersGpuInThatGpusContextAndRestoresTheCallers) {
  fake_cuda_make_current(0);
  std::shared_ptr<const Module> module = device().compile("// ptx", copy_abi());
  Buffer src = on_gpu(1, 256), dst = on_gpu(1, 256);
  fake_cuda_make_current(0);  // the caller's current device is GPU 0
  const int before0 = fake_cuda_launches(0), before1 = fake_cuda_launches(1);
  const KernelArg args[] = {src, dst, uint32_t(256)};
  LaunchOptions options;
  options.stream = 0x5eed;
  options.wait = false;
  device().launch(*module, {2, 1, 1}, args, options);
  EXPECT_EQ(fake_cuda_launches(1), before1 + 1);  // loaded into GPU 1's context, run there
  EXPECT_EQ(fake_cuda_launches(0), before0);
  EXPECT_EQ(fake_cuda_last_launch_stream(), 0x5eedu);
  EXPECT_EQ(fake_cuda_current(), 0);  // the caller's context again
  // A second launch on GPU 0 uses the module loaded there at the compile.
  Buffer a = on_gpu(0, 256), b = on_gpu(0, 256);
  const KernelArg on_zero[] = {a, b, uint32_t(256)};
  fake_cuda_make_current(-1);
  EXPECT_EQ(device().launch(*module, {2, 1, 1}, on_zero).elapsed_ms, 0.5);
  EXPECT_EQ(fake_cuda_launches(0), before0 + 1);
  EXPECT_EQ(fake_cuda_current(), -1);
  EXPECT_EQ(fake_cuda_wrong_context_calls(), 0);
}

TEST_F(SeveralGpus, BuffersOnDifferentGpusAreAnErrorNamingThem) {
  std::shared_ptr<const Module> module = device().compile("// ptx", copy_abi());
  Buffer src = on_gpu(0, 64), dst = on_gpu(1, 64);
  const KernelArg args[] = {src, dst, uint32_t(64)};
  try {
    device().launch(*module, {1, 1, 1}, args);
    FAIL() << "a launch over two GPUs ran";
  } catch (const UserError& e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel 'copy' has buffer arguments on different GPUs: "
                                    "'src' on cuda:0; 'dst' on cuda:1"));
  }
  // An empty buffer is never dereferenced: it goes with any GPU.
  Buffer empty = on_gpu(0, 0);
  const KernelArg with_empty[] = {empty, dst, uint32_t(0)};
  EXPECT_NO_THROW(device().launch(*module, {1, 1, 1}, with_empty));
}

TEST_F(SeveralGpus, SynchronizeWaitsForOneGpuOrForEveryOpenedGpu) {
  device().gpu(0);
  device().gpu(1);
  const int zero = fake_cuda_synchronizations(0), one = fake_cuda_synchronizations(1);
  device().synchronize_gpu(1);
  EXPECT_EQ(fake_cuda_synchronizations(1), one + 1);
  EXPECT_EQ(fake_cuda_synchronizations(0), zero);
  device().synchronize();
  EXPECT_EQ(fake_cuda_synchronizations(0), zero + 1);
  EXPECT_EQ(fake_cuda_synchronizations(1), one + 2);
  EXPECT_THROW(device().synchronize_gpu(7), UserError);
  EXPECT_EQ(fake_cuda_current(), -1);
}

TEST_F(SeveralGpus, ACubinOfOneArchitectureIsNotRunOnAGpuOfAnother) {
  std::string why;
  if (!Nvrtc::shared(&why)) GTEST_SKIP() << "NVRTC is not available: " << why;
  codegen::KernelABI abi = copy_abi();
  abi.source_is_ptx = false;
  fake_cuda_make_current(0);
  std::shared_ptr<const Module> module = device().compile(
      "extern \"C\" __global__ void copy(const float* s, float* d, unsigned n) {\n"
      "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n) d[i] = s[i];\n}\n",
      abi);
  Buffer src = on_gpu(2, 64), dst = on_gpu(2, 64);
  const KernelArg args[] = {src, dst, uint32_t(64)};
  try {
    device().launch(*module, {1, 1, 1}, args);
    FAIL() << "an sm_90a cubin was launched on an sm_80 GPU";
  } catch (const NotSupported& e) {
    EXPECT_THAT(e.what(), HasSubstr("kernel 'copy' was compiled for sm_90a and cannot run on "
                                    "GPU 2 (Fake GPU 2, compute capability 8.0) (sm_80)"));
  }
  // And the GPU has no Target: nothing is compiled for it.
  fake_cuda_make_current(2);
  EXPECT_THROW(device().target(), NotSupported);
  fake_cuda_make_current(-1);
}

}  // namespace
}  // namespace metile::runtime::cuda
