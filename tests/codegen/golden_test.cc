// The emitted MSL of the test kernels, compared exactly with tests/codegen/golden/msl/*.metal
// (one folder per dialect, golden_util.h).
// Regenerate with METILE_UPDATE_GOLDEN=1 and review the diff: a golden change is a change of
// every kernel's code.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "golden_util.h"
#include "metal_kernels.h"
#include "metile/codegen/emit.h"
#include "metile/codegen/msl/msl_dialect.h"

namespace metile::codegen::testing {
namespace {

class GoldenTest : public ::testing::TestWithParam<NamedKernel> {};

TEST_P(GoldenTest, EmittedMslMatchesGolden) {
  const NamedKernel& kernel = GetParam();
  const std::string source = emit(kernel.build(), target::default_target()).source;
  const std::string path = golden_dir(msl_dialect()) + "/" + kernel.name + ".metal";
  if (update_golden()) {
    write_file(path, source);
    GTEST_SKIP() << "rewrote " << path << "; review the diff before committing";
  }
  ASSERT_TRUE(std::filesystem::exists(path))
      << path << " is missing; run with METILE_UPDATE_GOLDEN=1 to create it";
  EXPECT_EQ(source, read_file(path))
      << "the emitted MSL of " << kernel.name << " differs from " << path
      << "; if the change is intended, rerun with METILE_UPDATE_GOLDEN=1 and review the diff";
}

// The goldens must compile as C++ against the host emulator's Metal standard library: the
// emulator compiles exactly this text.
TEST_P(GoldenTest, CompilesAgainstHostMetalStdlib) {
  const std::string include = source_dir() + "/metile/runtime/host/include";
  ASSERT_TRUE(std::filesystem::exists(include + "/metal_stdlib"))
      << include << "/metal_stdlib is missing: the goldens cannot be compiled as C++";
  const std::string path = golden_dir(msl_dialect()) + "/" + GetParam().name + ".metal";
  ASSERT_TRUE(std::filesystem::exists(path)) << path;
  const std::string command = "c++ -x c++ -fsyntax-only -std=c++20 -Wno-attributes -I '" + include +
                              "' '" + path + "' 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
}

INSTANTIATE_TEST_SUITE_P(Kernels, GoldenTest, ::testing::ValuesIn(golden_kernels()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace metile::codegen::testing
