// A bounds-checked launch (METILE_DEBUG=bounds, runtime/cuda/bounds_launch.h) on the stand-in
// driver of fake_libcuda, without a GPU: the launch passes each buffer's extent and a zeroed
// fault record after the kernel's own arguments, waits even when asked not to, and raises the
// fault a kernel recorded as a KernelFaultError naming the kernel, buffer, offset and line; a
// launch without the checks stays asynchronous. tests/python/test_cuda_bounds.py runs real
// kernels on a GPU.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "metile/codegen/cuda/cuda_bounds.h"
#include "metile/runtime/cuda/cuda_device.h"
#include "metile/runtime/kernel_errors.h"

extern "C" {
void fake_cuda_on_launch(void (*hook)(void** params));
void fake_cuda_make_current(int ordinal);
}

namespace metile::runtime::cuda {
namespace {

using codegen::cuda_bounds::FaultRecord;

const bool kFakeDriver = [] {
  setenv("METILE_LIBCUDA_LIBRARY", METILE_FAKE_LIBCUDA, 1);
  setenv("FAKE_CUDA_CAPABILITIES", "90", 1);
  return true;
}();

codegen::KernelABI copy_abi(bool bounds_checks) {
  using codegen::AbiParam;
  codegen::KernelABI abi;
  abi.kernel_name = "copy";
  abi.body_name = "copy_body";
  abi.params = {{"src", AbiParam::Kind::Buffer, ir::DType::f32, "read"},
                {"n", AbiParam::Kind::Scalar, ir::DType::u32, ""},
                {"dst", AbiParam::Kind::Buffer, ir::DType::f32, "write"}};
  abi.threads_per_threadgroup = {128, 1, 1};
  abi.source_is_ptx = true;  // the fake driver loads any text
  abi.bounds_checks = bounds_checks;
  abi.source_lines = {{7, SourceLocation{"probe.py", 12}}};
  return abi;
}

// What the last launch passed after the kernel's arguments, read by the hook.
struct Seen {
  int launches = 0;
  std::vector<unsigned long long> extents;
  uint32_t record_state = ~0u;
  bool fault = false;  // the hook writes a fault into the record, as a kernel would
};
Seen seen;

void read_hidden_arguments(void** params) {
  ++seen.launches;
  seen.extents = {*static_cast<unsigned long long*>(params[3]),
                  *static_cast<unsigned long long*>(params[4])};
  auto* record = reinterpret_cast<FaultRecord*>(*static_cast<CUdeviceptr*>(params[5]));
  seen.record_state = record->state;
  if (!seen.fault) return;
  record->state = codegen::cuda_bounds::kWritten;
  record->param = 0;
  record->byte_offset = 244;
  record->bytes = 4;
  record->line = 7;
  record->thread = 9;
  record->block[1] = 2;
}

class BoundsLaunch : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(kFakeDriver);
    ASSERT_EQ(cuda_unavailable_reason(), "");
    fake_cuda_make_current(0);
    seen = Seen{};
    fake_cuda_on_launch(read_hidden_arguments);
  }
  void TearDown() override { fake_cuda_on_launch(nullptr); }
};

TEST_F(BoundsLaunch, ExtentsAndAZeroedRecordFollowTheArgumentsAndTheLaunchWaits) {
  std::shared_ptr<const Module> module = cuda_device().compile("// ptx", copy_abi(true));
  Buffer src = cuda_device().allocate(ir::DType::f32, {61});
  Buffer dst = cuda_device().allocate(ir::DType::f32, {16});
  const KernelArg args[] = {src, uint32_t(61), dst};
  LaunchOptions options;
  options.wait = false;  // a bounds-checked launch waits for its record anyway
  const LaunchTiming timing = cuda_device().launch(*module, {1, 1, 1}, args, options);
  EXPECT_EQ(seen.launches, 1);
  EXPECT_EQ(seen.extents, (std::vector<unsigned long long>{244, 64}));
  EXPECT_EQ(seen.record_state, codegen::cuda_bounds::kNoFault);
  EXPECT_EQ(timing.elapsed_ms, 0.5) << "it waited, timed by the fake's events";
}

TEST_F(BoundsLaunch, ARecordedFaultIsRaisedNamingKernelBufferOffsetAndLine) {
  std::shared_ptr<const Module> module = cuda_device().compile("// ptx", copy_abi(true));
  Buffer src = cuda_device().allocate(ir::DType::f32, {61});
  Buffer dst = cuda_device().allocate(ir::DType::f32, {16});
  const KernelArg args[] = {src, uint32_t(61), dst};
  seen.fault = true;
  try {
    cuda_device().launch(*module, {1, 3, 1}, args);
    FAIL() << "the recorded fault was not raised";
  } catch (const KernelFaultError& e) {
    EXPECT_EQ(e.rule(),
              "out-of-bounds access in kernel 'copy' (threadgroup (0,2,0), thread 9): the access "
              "at byte offset 244 is past the end of buffer 0 ('src', 244 bytes) (a 4-byte read)");
    EXPECT_EQ(std::string(e.what()).rfind("probe.py:12: out-of-bounds access", 0), 0u);
    EXPECT_EQ(e.where().file, "probe.py");
    EXPECT_EQ(e.where().line, 12);
    EXPECT_EQ(e.site().buffer, "src");
    EXPECT_EQ(e.site().byte_offset, 244);
  }
  // A fresh record for every launch: the next one is clean.
  seen.fault = false;
  EXPECT_NO_THROW(cuda_device().launch(*module, {1, 1, 1}, args));
  EXPECT_EQ(seen.record_state, codegen::cuda_bounds::kNoFault);
}

TEST_F(BoundsLaunch, ALaunchWithoutChecksStaysAsynchronous) {
  fake_cuda_on_launch([](void**) { ++seen.launches; });
  std::shared_ptr<const Module> module = cuda_device().compile("// ptx", copy_abi(false));
  Buffer src = cuda_device().allocate(ir::DType::f32, {61});
  Buffer dst = cuda_device().allocate(ir::DType::f32, {16});
  const KernelArg args[] = {src, uint32_t(61), dst};
  LaunchOptions options;
  options.wait = false;
  EXPECT_EQ(cuda_device().launch(*module, {1, 1, 1}, args, options).elapsed_ms, 0.0)
      << "queued, untimed: no record to wait for";
  EXPECT_EQ(seen.launches, 1);
}

}  // namespace
}  // namespace metile::runtime::cuda
