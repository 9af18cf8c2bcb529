// The graph executor on the host device: regions become kernels, a run matches a plain C++
// reference, and inputs are checked by name.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "metile/graph/graph_builder.h"
#include "metile/graph/run/compiled_graph.h"
#include "metile/runtime/devices.h"
#include "metile/support/errors.h"

namespace metile::graph {
namespace {

runtime::Buffer upload(const std::vector<float>& data, const Shape& shape) {
  runtime::Buffer b = runtime::get_device("host").allocate(ir::DType::f32, shape);
  b.copy_from_host(data.data(), data.size() * sizeof(float));
  return b;
}

std::vector<float> download(const runtime::Buffer& b) {
  std::vector<float> out(b.size_bytes() / sizeof(float));
  b.copy_to_host(out.data(), b.size_bytes());
  return out;
}

std::vector<float> random_vector(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

// Seed 000's example with a ragged row length and three rows: add then rms_norm, both results
// graph outputs, in one kernel.
TEST(CompiledGraph, AddRmsNormIsOneKernelWithTwoOutputs) {
  const int64_t rows = 3, cols = 1000;
  GraphBuilder b;
  Value values = b.input("values", TensorSpec({rows, cols}, "f32"));
  Value residual = b.input("residual", TensorSpec({rows, cols}, "f32"));
  Value weight = b.input("weight", TensorSpec({cols}, "f32"));
  Value summed = b.add(values, residual);
  Value normalized = b.rms_norm(summed, weight, 1e-5);
  FusionPlan plan = plan_graph_fusion(b.build({summed, normalized}));
  CompileOptions options;
  options.device = "host";
  auto run = compile(plan, options);
  ASSERT_EQ(run->kernels().size(), 1u);

  std::vector<float> v = random_vector(rows * cols, 1), r = random_vector(rows * cols, 2),
                     w = random_vector(cols, 3);
  std::vector<runtime::Buffer> out = run->run({{"values", upload(v, {rows, cols})},
                                               {"residual", upload(r, {rows, cols})},
                                               {"weight", upload(w, {cols})}});
  std::vector<float> got_sum = download(out[0]), got_norm = download(out[1]);
  for (int64_t i = 0; i < rows; ++i) {
    double squares = 0;
    for (int64_t j = 0; j < cols; ++j) {
      double s = double(v[i * cols + j]) + r[i * cols + j];
      squares += s * s;
    }
    double scale = 1.0 / std::sqrt(squares / cols + 1e-5);
    for (int64_t j = 0; j < cols; ++j) {
      double s = double(v[i * cols + j]) + r[i * cols + j];
      ASSERT_NEAR(got_sum[i * cols + j], s, 1e-5) << i << "," << j;
      ASSERT_NEAR(got_norm[i * cols + j], s * scale * w[j], 1e-4) << i << "," << j;
    }
  }
  EXPECT_NE(run->explain().find("\"kernels\""), std::string::npos);
}

TEST(CompiledGraph, InputsAreCheckedByName) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({4, 8}, "f32"));
  FusionPlan plan = plan_graph_fusion(b.build({b.exp(x)}));
  CompileOptions options;
  options.device = "host";
  auto run = compile(plan, options);
  EXPECT_EQ(error_of([&] { run->run({}); }), "graph input 'x' ((4, 8) f32) is missing");
  EXPECT_EQ(error_of([&] {
              run->run({{"x", upload(std::vector<float>(32), {8, 4})}});
            }),
            "graph input 'x': expected (4, 8) f32, got 128 bytes of f32, shape (8, 4) (shape "
            "differs)");
  EXPECT_EQ(error_of([&] {
              run->run({{"x", upload(std::vector<float>(32), {4, 8})},
                        {"y", upload(std::vector<float>(32), {4, 8})}});
            }),
            "graph input 'y' is not an input of the graph (inputs: x)");
}

// x @ transpose(w) for a linear layer's (N, K) weight: the transpose is a view (no kernel),
// the matmul reads w through swapped strides; K, M and N ragged.
TEST(CompiledGraph, TransposedOperandIsReadInPlace) {
  const int64_t m = 5, k = 37, n = 70;
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({m, k}, "f32"));
  Value w = b.input("w", TensorSpec({n, k}, "f32"));
  FusionPlan plan = plan_graph_fusion(b.build({b.matmul(x, b.transpose(w))}));
  CompileOptions options;
  options.device = "host";
  auto run = compile(plan, options);
  ASSERT_EQ(run->kernels().size(), 1u);
  EXPECT_EQ(run->kernels()[0].lowered.form, "matmul");
  ASSERT_EQ(run->views().views.size(), 1u);
  EXPECT_EQ(run->views().views.begin()->second.str(plan.graph), "%w, offset 0, strides (1, 37)");
  std::vector<float> xv = random_vector(m * k, 1), wv = random_vector(n * k, 2);
  auto out = run->run({{"x", upload(xv, {m, k})}, {"w", upload(wv, {n, k})}});
  std::vector<float> got = download(out[0]);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += double(xv[i * k + p]) * wv[j * k + p];
      EXPECT_NEAR(got[i * n + j], want, 1e-4) << i << ", " << j;
    }
}

}  // namespace
}  // namespace metile::graph
