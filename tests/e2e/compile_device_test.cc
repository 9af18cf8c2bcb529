// metile::compile honours the device: it compiles for the device's Target, keys its cache
// by device and Target, and launches on the device that built the kernel.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "metile/compile.h"
#include "metile/dsl/dsl.h"
#include "metile/runtime/devices.h"
#include "metile/target/target.h"

namespace metile {
namespace {

using namespace metile::dsl;

void copy_kernel(KernelContext& k) {
  auto x = k.buffer("x", f32, "read");
  auto y = k.buffer("y", f32, "write");
  auto offsets = program_id(0) * 64 + arange(0, 64);
  store(y + offsets, load(x + offsets));
}

// The host emulator presenting itself as an Apple M3: the same execution, another Target.
class M3OnHost : public runtime::Device {
 public:
  std::string name() const override { return "m3-on-host"; }
  std::string kind() const override { return "host"; }
  const target::Target& target() const override { return target::target_by_name("apple-m3"); }
  runtime::Buffer allocate(std::size_t bytes) override { return host().allocate(bytes); }
  std::shared_ptr<const runtime::Module> compile(std::string_view source,
                                                 const codegen::KernelABI& abi) override {
    return host().compile(source, abi);
  }
  runtime::LaunchTiming launch(const runtime::Module& module, const runtime::Grid& grid,
                               std::span<const runtime::KernelArg> args,
                               const runtime::LaunchOptions& = {}) override {
    ++launches;
    return host().launch(module, grid, args);
  }
  std::atomic<int> launches{0};

 private:
  static runtime::Device& host() { return runtime::get_device("host"); }
};

M3OnHost& m3_on_host() {
  static M3OnHost device;
  static const bool registered = [] {
    runtime::register_device(device.name(), []() -> runtime::Device& { return device; });
    return true;
  }();
  EXPECT_TRUE(registered);
  return device;
}

TEST(CompileForADevice, TheDefaultDeviceAndItsTarget) {
  auto compiled = compile("copy", copy_kernel);
  EXPECT_EQ(&compiled->device(), &runtime::default_device());
  EXPECT_EQ(compiled->report().target, runtime::default_device().target().name);
}

TEST(CompileForADevice, EachTargetIsItsOwnCacheEntry) {
  M3OnHost& m3 = m3_on_host();
  CompileOptions on_m3;
  on_m3.device = m3.name();
  auto for_host = compile("copy", copy_kernel);
  auto for_m3 = compile("copy", copy_kernel, {}, on_m3);
  EXPECT_NE(for_host, for_m3);
  EXPECT_EQ(for_m3->report().target, "apple-m3");
  EXPECT_EQ(&for_m3->device(), &m3);
  EXPECT_EQ(compile("copy", copy_kernel, {}, on_m3), for_m3);  // a cache hit
  EXPECT_EQ(compile("copy", copy_kernel), for_host);

  std::vector<float> x(64, 2.0f), y(64, 0.0f);
  const KernelArg args[] = {BufferView{x.data(), 256, ir::DType::f32},
                            BufferView{y.data(), 256, ir::DType::f32}};
  const int before = m3.launches;
  const runtime::LaunchTiming timing = for_m3->launch({1, 1, 1}, args);
  EXPECT_EQ(m3.launches, before + 1);  // launched through the device it was compiled for
  EXPECT_GE(timing.elapsed_ms, 0.0);
  EXPECT_EQ(y[63], 2.0f);
}

TEST(CompileForADevice, AnUnbuiltDeviceIsNotSupported) {
  CompileOptions on_metal;
  on_metal.device = "metal";
  EXPECT_THROW(compile("copy", copy_kernel, {}, on_metal), NotSupported);
}

TEST(CompileForADevice, CudaWithoutAGpuSaysWhy) {
  if (runtime::find_device("cuda")) GTEST_SKIP() << "this machine has a GPU";
  CompileOptions on_cuda;
  on_cuda.device = "cuda";
  try {
    compile("copy", copy_kernel, {}, on_cuda);
    FAIL() << "compiling for cuda without a GPU did not fail";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("device 'cuda' is not available on this machine"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace metile
