// The emitted source of the test kernels, compared exactly with the goldens of each dialect:
// tests/codegen/golden/msl/*.metal for apple-m3 (whose MSL the host target shares; the host
// adds a work-group function, workgroup_emitter_test), golden/cuda/*.cu for sm90 (one
// folder per dialect, golden_util.h).
// Regenerate with METILE_UPDATE_GOLDEN=1 and review the diff: a golden change is a change of
// every kernel's code.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "error_of.h"
#include "golden_util.h"
#include "metal_kernels.h"
#include "metile/codegen/cuda/cuda_dialect.h"
#include "metile/codegen/emit.h"
#include "metile/codegen/msl/msl_dialect.h"
#include "metile/support/errors.h"

namespace metile::codegen::testing {
namespace {

void expect_matches_golden(const std::string& source, const std::string& path,
                           const std::string& what) {
  if (update_golden()) {
    write_file(path, source);
    GTEST_SKIP() << "rewrote " << path << "; review the diff before committing";
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; run with METILE_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(source, read_file(path))
      << "the emitted " << what << " differs from " << path
      << "; if the change is intended, rerun with METILE_UPDATE_GOLDEN=1 and review the diff";
}

class GoldenTest : public ::testing::TestWithParam<NamedKernel> {};

TEST_P(GoldenTest, EmittedMslMatchesGolden) {
  const NamedKernel& kernel = GetParam();
  expect_matches_golden(emit(kernel.build(), target::target_by_name("apple-m3")).source,
                        golden_file(msl_dialect(), kernel.name), "MSL of " + kernel.name);
}

// The goldens must compile as C++ against the host emulator's Metal standard library: the
// emulator compiles exactly this text.
TEST_P(GoldenTest, CompilesAgainstHostMetalStdlib) {
  const std::string include = source_dir() + "/metile/runtime/host/include";
  ASSERT_TRUE(std::filesystem::exists(include + "/metal_stdlib"))
      << include << "/metal_stdlib is missing: the goldens cannot be compiled as C++";
  const std::string path = golden_file(msl_dialect(), GetParam().name);
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const std::string command = "c++ -x c++ -fsyntax-only -std=c++20 -Wno-attributes -I '" + include +
                              "' '" + path + "' 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

INSTANTIATE_TEST_SUITE_P(Kernels, GoldenTest, ::testing::ValuesIn(golden_kernels()),
                         [](const auto& info) { return info.param.name; });

// The CUDA goldens hold the kernels the CUDA dialect can express: all but vec4 (see
// CudaGolden.VectorKernelIsNotSupported). cuda_compile_test compiles them with NVRTC.
class CudaGoldenTest : public ::testing::TestWithParam<NamedKernel> {};

TEST_P(CudaGoldenTest, EmittedCudaMatchesGolden) {
  const NamedKernel& kernel = GetParam();
  expect_matches_golden(emit(kernel.build(), target::target_by_name("sm90")).source,
                        golden_file(cuda_dialect(), kernel.name), "CUDA of " + kernel.name);
}

INSTANTIATE_TEST_SUITE_P(Kernels, CudaGoldenTest, ::testing::ValuesIn(cuda_golden_kernels()),
                         [](const auto& info) { return info.param.name; });

TEST(CudaGolden, VectorKernelIsNotSupported) {
  const std::string message =
      error_of<NotSupported>([&] { emit(vec4_kernel(), target::target_by_name("sm90")); });
  EXPECT_NE(message.find("emit CUDA: load: vector values (vec<4xf32>) are not supported in CUDA"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace metile::codegen::testing
