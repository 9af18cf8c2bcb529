// End-to-end: the library's decode GEMV (metile::kernels::gemv, and split_sum for its K
// splits) compiled by the whole pipeline and run on the host target against a plain C++
// product: ragged N and K (4095 x 4097 included), one split and several, f16, bf16 and f32.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "examples/reference/reference.h"
#include "metile/compile.h"
#include "metile/kernels/gemv.h"

namespace metile::reference {
namespace {

ir::DType dtype_of(Storage s) {
  return s == Storage::f16 ? ir::DType::f16 : s == Storage::bf16 ? ir::DType::bf16 : ir::DType::f32;
}

BufferView view(HostArray& a) {
  return {a.data(), a.byte_size(), dtype_of(a.storage())};
}

struct Case {
  Storage storage;
  int rows, columns, inner, splits;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << storage_name(c.storage) << " " << c.rows << "x" << c.columns << "x" << c.inner << " / "
      << c.splits;
}
std::string case_name(const testing::TestParamInfo<Case>& info) {
  const Case& c = info.param;
  return storage_name(c.storage) + "_" + std::to_string(c.rows) + "x" + std::to_string(c.columns) +
         "x" + std::to_string(c.inner) + "_splits_" + std::to_string(c.splits);
}

class Gemv : public testing::TestWithParam<Case> {};

TEST_P(Gemv, MatchesAPlainProduct) {
  const Case c = GetParam();
  constexpr int64_t kBlockN = 64, kUnroll = 4, kSumBlock = 128;
  const std::vector<float> a = random_values(size_t(c.rows) * c.inner, -1, 1, 1, c.storage),
                           b = random_values(size_t(c.inner) * c.columns, -1, 1, 2, c.storage);
  HostArray x(c.storage, a), weight(c.storage, b), out(c.storage, size_t(c.rows) * c.columns);
  // K rows per split, whole steps of kUnroll; no split without rows to read.
  const int64_t steps = (c.inner + kUnroll - 1) / kUnroll;
  const int64_t chunk = (steps + c.splits - 1) / c.splits * kUnroll;
  const int64_t splits = (c.inner + chunk - 1) / chunk;
  const int64_t column_blocks = (c.columns + kBlockN - 1) / kBlockN;
  if (splits == 1) {
    auto product =
        compile(kernels::gemv(dtype_of(c.storage), dtype_of(c.storage), kBlockN, kUnroll));
    const KernelArg args[] = {
        view(x),          view(weight), view(out), int64_t{c.rows}, int64_t{c.columns},
        int64_t{c.inner}, chunk};
    product->launch({c.rows, column_blocks, 1}, args);
  } else {
    HostArray slices(Storage::f32, size_t(splits) * c.rows * c.columns);
    auto partial = compile(kernels::gemv(dtype_of(c.storage), ir::DType::f32, kBlockN, kUnroll));
    const KernelArg partial_args[] = {
        view(x),          view(weight), view(slices), int64_t{c.rows}, int64_t{c.columns},
        int64_t{c.inner}, chunk};
    partial->launch({c.rows, column_blocks, splits}, partial_args);
    auto sum = compile(kernels::split_sum(dtype_of(c.storage), kSumBlock));
    const KernelArg sum_args[] = {view(slices), view(out), int64_t{c.rows}, int64_t{c.columns},
                                  splits};
    sum->launch({c.rows, (c.columns + kSumBlock - 1) / kSumBlock, 1}, sum_args);
  }
  const double rtol = c.storage == Storage::f16 ? 2e-3 : c.storage == Storage::bf16 ? 1.6e-2 : 1e-5;
  int failures = 0;
  for (int i = 0; i < c.rows && failures < 5; ++i)
    for (int j = 0; j < c.columns && failures < 5; ++j) {
      double want = 0, scale = 0;
      for (int p = 0; p < c.inner; ++p) {
        const double term = double(a[size_t(i) * c.inner + p]) * b[size_t(p) * c.columns + j];
        want += term;
        scale += std::abs(term);
      }
      // f32 sums in another order: the error bound grows with the sum of |terms|.
      const double tolerance = rtol * std::abs(want) + 1e-6 * scale + 1e-6;
      const double got = out.at(size_t(i) * c.columns + j);
      if (!(std::abs(got - want) <= tolerance)) {
        ADD_FAILURE() << "(" << i << ", " << j << "): got " << got << ", expected " << want;
        ++failures;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Ragged, Gemv,
    testing::Values(Case{Storage::f32, 1, 64, 32, 1}, Case{Storage::f32, 3, 45, 97, 3},
                    Case{Storage::f16, 2, 130, 70, 1}, Case{Storage::f16, 1, 77, 129, 4},
                    Case{Storage::bf16, 1, 4095, 4097, 8}, Case{Storage::bf16, 2, 40, 33, 2}),
    case_name);

}  // namespace
}  // namespace metile::reference
