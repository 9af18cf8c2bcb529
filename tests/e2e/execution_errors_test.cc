// Undefined behaviour in a generated kernel is an error on the host target, never garbage:
// an unmasked tail reads past the end of its buffer and the launch reports it.
#include <gtest/gtest.h>

#include <vector>

#include "metile/compile.h"
#include "metile/dsl/dsl.h"
#include "metile/runtime/devices.h"
#include "metile/runtime/kernel_errors.h"

namespace metile {
namespace {

using namespace metile::dsl;

// Copies BLOCK elements per program and forgets the tail mask.
void unmasked_copy_kernel(KernelContext& k) {
  auto x = k.buffer("x", f32, "read");
  auto y = k.buffer("y", f32, "write");
  const int64_t block = k.constexpr_int("BLOCK");
  auto offsets = program_id(0) * block + arange(0, block);
  store(y + offsets, load(x + offsets));
}

// Out-of-bounds accesses are caught by the host emulator's guard pages; a GPU does not
// promise to fault on them, so these run on the host device whatever the default is.
std::shared_ptr<const CompiledKernel> unmasked_copy() {
  CompileOptions on_host;
  on_host.device = "host";
  return compile("unmasked_copy", unmasked_copy_kernel, {{"BLOCK", 64}}, on_host);
}

TEST(GeneratedKernelFaults, UnmaskedTailIsReportedAsOutOfBounds) {
  auto compiled = unmasked_copy();
  runtime::Device& device = runtime::get_device("host");
  const int n = 100;  // two programs of 64: the second runs 28 elements past the end
  runtime::Buffer x = device.allocate(ir::DType::f32, {n});
  runtime::Buffer y = device.allocate(ir::DType::f32, {n});
  const KernelArg args[] = {x, y};
  try {
    compiled->launch({2, 1, 1}, args);
    FAIL() << "the out-of-bounds access was not reported";
  } catch (const runtime::KernelFaultError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("out-of-bounds access in kernel 'unmasked_copy'"), std::string::npos)
        << message;
    EXPECT_NE(message.find("threadgroup (1,0,0)"), std::string::npos) << message;
  }
  // The same kernel is fine when every access is in bounds.
  runtime::Buffer x128 = device.allocate(ir::DType::f32, {128});
  runtime::Buffer y128 = device.allocate(ir::DType::f32, {128});
  std::vector<float> data(128);
  for (int i = 0; i < 128; ++i) data[i] = static_cast<float>(i);
  x128.copy_from_host(data.data(), data.size() * sizeof(float));
  const KernelArg ok_args[] = {x128, y128};
  compiled->launch({2, 1, 1}, ok_args);
  EXPECT_EQ(y128.data_as<float>()[127], 127.0f);
}

TEST(GeneratedKernelFaults, ArgumentMismatchNamesTheParameter) {
  auto compiled = unmasked_copy();
  runtime::Buffer x = runtime::get_device("host").allocate(ir::DType::f32, {64});
  const KernelArg args[] = {x, int64_t{3}};
  try {
    compiled->launch({1, 1, 1}, args);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'y'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace metile
