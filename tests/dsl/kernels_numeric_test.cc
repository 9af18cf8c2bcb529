// The library kernels compute what they promise: each runs in the Tile IR reference
// interpreter on ragged shapes (n not a multiple of BLOCK, n < BLOCK, n = 1) and is
// compared with a plain C++ reference in double precision.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "metile/dsl/trace.h"
#include "metile/ir/builder.h"
#include "metile/ir/parser.h"
#include "metile/kernels/kernels.h"
#include "tests/dsl/tile_interpreter.h"

namespace metile {
namespace {

using ir::DType;
using test::BufferArg;
using test::HostBuffer;

HostBuffer random_buffer(DType dtype, size_t n, uint32_t seed, double lo = -4, double hi = 4) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  HostBuffer b{dtype, {}};
  for (size_t i = 0; i < n; ++i) b.data.push_back(test::round_to(dtype, dist(gen)));
  return b;
}

// Relative tolerance of one storage rounding plus f32 accumulation.
double tolerance(DType dtype) {
  return dtype == DType::f32 ? 1e-5 : dtype == DType::f16 ? 2e-3 : 1.6e-2;
}

void expect_close(const std::vector<double>& got, const std::vector<double>& want, double tol,
                  const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i]))) << what << " element " << i;
}

struct Case {
  DType dtype;
  int64_t n;
};
void PrintTo(const Case& c, std::ostream* os) {
  *os << ir::dtype_name(c.dtype) << " n=" << c.n;
}
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(ir::dtype_name(info.param.dtype)) + "_n" + std::to_string(info.param.n);
}

class RaggedShapes : public ::testing::TestWithParam<Case> {};

constexpr int64_t kBlock = 64;
constexpr int64_t kRows = 3;

TEST_P(RaggedShapes, VectorAdd) {
  auto [dtype, n] = GetParam();
  std::vector<HostBuffer> bufs = {random_buffer(dtype, n, 1), random_buffer(dtype, n, 2),
                                  HostBuffer{dtype, std::vector<double>(n, 0)}};
  test::run_tile_ir(kernels::vector_add(dtype, kBlock), dsl::cdiv(n, kBlock),
                    {BufferArg{0}, BufferArg{1}, BufferArg{2}, n}, bufs);
  std::vector<double> want;
  for (int64_t i = 0; i < n; ++i) want.push_back(bufs[0].data[i] + bufs[1].data[i]);
  expect_close(bufs[2].data, want, tolerance(dtype), "vector_add");
}

TEST_P(RaggedShapes, Softmax) {
  auto [dtype, n] = GetParam();
  const int64_t stride = n + 3;  // rows are padded: the kernel must honour row_stride
  std::vector<HostBuffer> bufs = {random_buffer(dtype, kRows * stride, 3),
                                  HostBuffer{dtype, std::vector<double>(kRows * stride, -7)}};
  test::run_tile_ir(kernels::softmax(dtype, kBlock), kRows, {BufferArg{0}, BufferArg{1}, n, stride},
                    bufs);
  std::vector<double> want(kRows * stride, -7);
  for (int64_t r = 0; r < kRows; ++r) {
    const double* x = &bufs[0].data[r * stride];
    double m = -INFINITY, s = 0;
    for (int64_t c = 0; c < n; ++c) m = std::max(m, x[c]);
    for (int64_t c = 0; c < n; ++c) s += std::exp(x[c] - m);
    for (int64_t c = 0; c < n; ++c) want[r * stride + c] = std::exp(x[c] - m) / s;
  }
  expect_close(bufs[1].data, want, tolerance(dtype), "softmax");
}

TEST_P(RaggedShapes, RmsNorm) {
  auto [dtype, n] = GetParam();
  const int64_t stride = n + 1;
  const double eps = 1e-5;
  std::vector<HostBuffer> bufs = {random_buffer(dtype, kRows * stride, 4),
                                  random_buffer(dtype, n, 5, 0.5, 1.5),
                                  HostBuffer{dtype, std::vector<double>(kRows * stride, 0)}};
  test::run_tile_ir(kernels::rms_norm(dtype, kBlock), kRows,
                    {BufferArg{0}, BufferArg{1}, BufferArg{2}, n, stride, eps}, bufs);
  std::vector<double> want(kRows * stride, 0);
  for (int64_t r = 0; r < kRows; ++r) {
    const double* x = &bufs[0].data[r * stride];
    double ss = 0;
    for (int64_t c = 0; c < n; ++c) ss += x[c] * x[c];
    const double scale = 1 / std::sqrt(ss / static_cast<double>(n) + eps);
    for (int64_t c = 0; c < n; ++c) want[r * stride + c] = x[c] * scale * bufs[1].data[c];
  }
  expect_close(bufs[2].data, want, tolerance(dtype), "rms_norm");
}

TEST_P(RaggedShapes, RowSum) {
  auto [dtype, n] = GetParam();
  std::vector<HostBuffer> bufs = {random_buffer(dtype, kRows * n, 6),
                                  HostBuffer{DType::f32, std::vector<double>(kRows, 0)}};
  test::run_tile_ir(kernels::row_sum(dtype, kBlock), kRows, {BufferArg{0}, BufferArg{1}, n, n},
                    bufs);
  std::vector<double> want(kRows, 0);
  for (int64_t r = 0; r < kRows; ++r)
    for (int64_t c = 0; c < n; ++c) want[r] += bufs[0].data[r * n + c];
  // The sum is over stored (already rounded) inputs, accumulated in f32.
  expect_close(bufs[1].data, want, 1e-5 * static_cast<double>(n), "row_sum");
}

INSTANTIATE_TEST_SUITE_P(Kernels, RaggedShapes,
                         ::testing::Values(Case{DType::f32, 1}, Case{DType::f32, 37},
                                           Case{DType::f32, 64}, Case{DType::f32, 200},
                                           Case{DType::f16, 1}, Case{DType::f16, 100},
                                           Case{DType::bf16, 5}, Case{DType::bf16, 129}),
                         case_name);

TEST(TileInterpreter, RoundsLikeTheStorageTypes) {
  EXPECT_EQ(test::round_to(DType::f16, 1.0 + 1.0 / 4096), 1.0);               // below half an ulp
  EXPECT_EQ(test::round_to(DType::f16, 1.0 + 3.0 / 2048), 1.0 + 2.0 / 1024);  // ties to even
  EXPECT_EQ(test::round_to(DType::f16, 70000), INFINITY);
  EXPECT_EQ(test::round_to(DType::bf16, 1.0 + 1.0 / 256), 1.0);
  EXPECT_EQ(test::round_to(DType::bf16, 1.0 + 3.0 / 256), 1.0 + 1.0 / 64);
  EXPECT_EQ(test::round_to(DType::i32, 2.9), 2);
}

// Scalar ops follow the compiled code's semantics (the shared scalar evaluator): a nonzero
// float cast to i1 is true, floordiv rounds toward -inf, division by zero is an error.
TEST(TileInterpreter, ScalarOpsFollowTheCompiledSemantics) {
  ir::Kernel k;
  k.name = "scalars";
  ir::TileBuilder b(k);
  const ir::ValueId out = b.add_param("out", ir::Type::ptr(DType::i32), "write");
  const ir::ValueId d = b.add_param("d", ir::Type::scalar(DType::i32));
  auto store_at = [&](int64_t i, ir::ValueId v) { b.store(b.ptr_add(out, b.constant_int(i)), v); };
  store_at(0, b.cast(b.cast(b.constant(0.5, DType::f32), DType::i1), DType::i32));
  store_at(1, b.binary(ir::OpKind::FloorDiv, b.constant_int(-7), d));
  store_at(2, b.binary(ir::OpKind::Rem, b.constant_int(-7), d));
  std::vector<HostBuffer> bufs = {{DType::i32, std::vector<double>(3, 0.0)}};
  test::run_tile_ir(k, 1, {BufferArg{0}, int64_t{2}}, bufs);
  EXPECT_EQ(bufs[0].data, (std::vector<double>{1, -4, -1}));
  try {
    test::run_tile_ir(k, 1, {BufferArg{0}, int64_t{0}}, bufs);
    ADD_FAILURE() << "division by zero ran";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("integer division by zero"), std::string::npos)
        << e.what();
  }
}

// An if without results may leave out its else region; a false condition then runs nothing.
TEST(TileInterpreter, AnIfWithoutElseAndAFalseConditionRunsNothing) {
  const ir::Kernel k = ir::parse(
      "tile.kernel @k(%p: ptr<i32> {access = \"write\"}, %n: i32) {\n"
      "  %0 = cmp %n, %n {pred = \"ne\"} : i1\n"
      "  if %0 {\n"
      "    store %p, %n\n"
      "    yield\n"
      "  }\n"
      "}\n");
  std::vector<HostBuffer> bufs = {{DType::i32, {7}}};
  test::run_tile_ir(k, 1, {BufferArg{0}, int64_t{3}}, bufs);
  EXPECT_EQ(bufs[0].data, (std::vector<double>{7}));
}

}  // namespace
}  // namespace metile
