// End-to-end: the library GEMM (metile::kernels::gemm) compiled by the whole pipeline and run
// on the host target against a plain C++ product, on ragged shapes (M, N, K not multiples of
// the blocks, K below one block, one row), f16, bf16 and f32 inputs, f32 or input-dtype output.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "examples/reference/reference.h"
#include "metile/compile.h"
#include "metile/kernels/gemm.h"

namespace metile::reference {
namespace {

ir::DType dtype_of(Storage s) {
  return s == Storage::f16 ? ir::DType::f16 : s == Storage::bf16 ? ir::DType::bf16 : ir::DType::f32;
}

BufferView view(HostArray& a) {
  return {a.data(), a.byte_size(), dtype_of(a.storage())};
}

struct Case {
  Storage input, output;
  int rows, columns, inner;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << storage_name(c.input) << "->" << storage_name(c.output) << " " << c.rows << "x"
      << c.columns << "x" << c.inner;
}
std::string case_name(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return storage_name(c.input) + "_to_" + storage_name(c.output) + "_" + std::to_string(c.rows) +
         "x" + std::to_string(c.columns) + "x" + std::to_string(c.inner);
}

class Gemm : public testing::TestWithParam<Case> {};

// The case under `options` (the shapes stay runtime scalars: nothing is specialised); the
// staging the plan chose.
schedule::Staging expect_plain_product(const Case& c, const CompileOptions& options) {
  constexpr int kBlock = 32;
  // Multiples of 1/2 in [-2, 2]: every product and partial sum is exact in f32.
  auto halves = [&](size_t n, uint32_t seed) {
    std::vector<float> v = random_values(n, -4, 5, seed, Storage::f32);
    for (float& x : v) x = std::floor(x) * 0.5f;
    return v;
  };
  const std::vector<float> a = halves(size_t(c.rows) * c.inner, 1),
                           b = halves(size_t(c.inner) * c.columns, 2);
  HostArray left(c.input, a), right(c.input, b), out(c.output, size_t(c.rows) * c.columns);
  auto compiled =
      compile(kernels::gemm(dtype_of(c.input), dtype_of(c.output), kBlock, kBlock, 16), options);
  const KernelArg args[] = {view(left),      view(right),        view(out),
                            int64_t{c.rows}, int64_t{c.columns}, int64_t{c.inner}};
  compiled->launch({(c.rows + kBlock - 1) / kBlock, (c.columns + kBlock - 1) / kBlock, 1}, args);
  for (int i = 0; i < c.rows; ++i)
    for (int j = 0; j < c.columns; ++j) {
      float want = 0;
      for (int p = 0; p < c.inner; ++p)
        want += a[size_t(i) * c.inner + p] * b[size_t(p) * c.columns + j];
      EXPECT_EQ(out.at(size_t(i) * c.columns + j), round_to(c.output, want)) << i << ", " << j;
    }
  return compiled->schedule_plan().staging;
}

TEST_P(Gemm, MatchesAPlainProduct) {
  expect_plain_product(GetParam(), {});
}

// Schedule(backend="simdgroup", staging="device"): operand fragments straight from device
// memory, with the runtime row strides of left and right.
TEST_P(Gemm, MatchesAPlainProductWithDeviceStaging) {
  CompileOptions options;
  schedule::Schedule device;
  device.backend = schedule::Backend::Simdgroup;
  device.staging = schedule::Staging::Device;
  options.schedule = device;
  EXPECT_EQ(expect_plain_product(GetParam(), options), schedule::Staging::Device);
}

INSTANTIATE_TEST_SUITE_P(Ragged, Gemm,
                         testing::Values(Case{Storage::f32, Storage::f32, 64, 64, 32},
                                         Case{Storage::f32, Storage::f32, 45, 70, 37},
                                         Case{Storage::f16, Storage::f16, 33, 40, 5},
                                         Case{Storage::f16, Storage::f32, 1, 64, 48},
                                         Case{Storage::bf16, Storage::f32, 40, 33, 32}),
                         case_name);

}  // namespace
}  // namespace metile::reference
