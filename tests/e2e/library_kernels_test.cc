// End-to-end: the library kernels compiled by the whole pipeline and run on the host
// target, against plain C++ references, with ragged sizes (N not a multiple of BLOCK,
// N < BLOCK, N = 1) and f16, bf16 and f32 storage.
#include <gtest/gtest.h>

#include <cmath>

#include "examples/reference/run_library_kernel.h"

namespace metile::reference {
namespace {

// |out - expected| <= atol + rtol * |expected| everywhere.
void expect_close(const KernelRun& run, double atol, double rtol) {
  ASSERT_EQ(run.output.size(), run.expected.size());
  int failures = 0;
  for (size_t i = 0; i < run.output.size() && failures < 5; ++i) {
    const double tolerance = atol + rtol * std::abs(run.expected[i]);
    if (!(std::abs(double(run.output[i]) - run.expected[i]) <= tolerance)) {
      ADD_FAILURE() << "element " << i << ": got " << run.output[i] << ", expected "
                    << run.expected[i];
      ++failures;
    }
  }
}

// Storage rounding: the kernel rounds once when it stores; f32 keeps float rounding error.
double rtol_of(Storage s) {
  return s == Storage::f16 ? 2e-3 : s == Storage::bf16 ? 1.6e-2 : 2e-6;
}

struct Case {
  Storage storage;
  int rows;
  int cols;
};
// gtest prints parameters in test listings; show the case, not its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << storage_name(c.storage) << " " << c.rows << "x" << c.cols;
}
std::string case_name(const testing::TestParamInfo<Case>& info) {
  return storage_name(info.param.storage) + "_" + std::to_string(info.param.rows) + "x" +
         std::to_string(info.param.cols);
}

class VectorAdd : public testing::TestWithParam<Case> {};
TEST_P(VectorAdd, MatchesReference) {
  const Case c = GetParam();
  expect_close(run_vector_add(c.storage, c.cols, 256), 0, rtol_of(c.storage));
}
INSTANTIATE_TEST_SUITE_P(Ragged, VectorAdd,
                         testing::Values(Case{Storage::f32, 1, 1}, Case{Storage::f32, 1, 100},
                                         Case{Storage::f32, 1, 1024}, Case{Storage::f32, 1, 5000},
                                         Case{Storage::f16, 1, 777}, Case{Storage::bf16, 1, 300}),
                         case_name);

class Softmax : public testing::TestWithParam<Case> {};
TEST_P(Softmax, MatchesReference) {
  const Case c = GetParam();
  expect_close(run_softmax(c.storage, c.rows, c.cols, 256), 1e-6, rtol_of(c.storage) + 1e-5);
}
INSTANTIATE_TEST_SUITE_P(Ragged, Softmax,
                         testing::Values(Case{Storage::f32, 3, 1}, Case{Storage::f32, 4, 100},
                                         Case{Storage::f32, 2, 256}, Case{Storage::f32, 3, 700},
                                         Case{Storage::f16, 2, 300}, Case{Storage::bf16, 2, 300}),
                         case_name);

class RmsNorm : public testing::TestWithParam<Case> {};
TEST_P(RmsNorm, MatchesReference) {
  const Case c = GetParam();
  expect_close(run_rms_norm(c.storage, c.rows, c.cols, 256), 1e-5, rtol_of(c.storage) + 1e-5);
}
INSTANTIATE_TEST_SUITE_P(Ragged, RmsNorm,
                         testing::Values(Case{Storage::f32, 2, 1}, Case{Storage::f32, 3, 100},
                                         Case{Storage::f32, 2, 600}, Case{Storage::f16, 3, 100},
                                         Case{Storage::f16, 2, 600}),
                         case_name);

class RowSum : public testing::TestWithParam<Case> {};
TEST_P(RowSum, MatchesReference) {
  const Case c = GetParam();
  // The sum accumulates in f32 whatever the storage; inputs are exact in the storage format.
  expect_close(run_row_sum(c.storage, c.rows, c.cols, 256), 1e-4, 1e-5);
}
INSTANTIATE_TEST_SUITE_P(Ragged, RowSum,
                         testing::Values(Case{Storage::f32, 3, 1}, Case{Storage::f32, 2, 100},
                                         Case{Storage::f32, 2, 1000}, Case{Storage::f16, 2, 300},
                                         Case{Storage::bf16, 2, 300}),
                         case_name);

}  // namespace
}  // namespace metile::reference
