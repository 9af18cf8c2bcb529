// The Tile IR of graph matmul regions on sm90's wgmma tiles (128-row blocks, K in steps of 64,
// N blocks of 256 or 128) computes what the graph says: each kernel runs in the Tile IR reference
// interpreter (tests/dsl) on ragged M, N and K and is compared with a plain C++ reference in
// double precision. (The host emulator cannot run these tiles: their accumulators and operand
// tiles need more than the host target's 32 KB of threadgroup memory.)
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "metile/graph/graph_builder.h"
#include "metile/graph/run/region_kernel.h"
#include "metile/graph/run/views.h"
#include "metile/lower/expand_tensor_access.h"
#include "metile/target/target.h"
#include "tests/dsl/tile_interpreter.h"

namespace metile::graph {
namespace {

using Matrix = std::vector<double>;  // row-major

Matrix random_f16(size_t n, uint32_t seed, double scale) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-scale, scale);
  Matrix m(n);
  for (double& x : m) x = test::round_to(ir::DType::f16, dist(gen));
  return m;
}

Matrix product(const Matrix& a, const Matrix& b, int64_t m, int64_t k, int64_t n) {
  Matrix c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

// Runs every kernel of every region of `graph`, lowered with sm90's tiles, in the Tile IR
// interpreter; `inputs` by input name; returns the graph's first output. Every kernel must take
// wgmma's tiles.
Matrix run_on_sm90_tiles(const Graph& graph, const std::map<std::string, Matrix>& inputs) {
  const target::Target& sm90 = target::target_by_name("sm90");
  FusionPlan plan = plan_graph_fusion(graph, sm90);
  ViewPlan views = plan_views(plan.graph);
  std::map<int, test::HostBuffer> values;
  for (int v : plan.graph.inputs())
    values[v] = {ir::DType::f16, inputs.at(plan.graph.value(v).name)};
  for (const FusedRegion& region : plan.regions)
    for (RegionKernel& k : lower_region(plan, views, region, "", sm90)) {
      EXPECT_EQ(k.decision.rfind("wgmma tiles of 128 x ", 0), 0u) << k.decision;
      EXPECT_EQ(k.grid[1], 1) << "the interpreter runs one grid axis";
      EXPECT_EQ(k.grid[2], 1);
      std::vector<test::HostBuffer> buffers;
      std::vector<test::Arg> args;
      for (int v : k.params) {
        if (!values.count(v))
          values[v] = {ir::DType::f16, Matrix(plan.graph.spec(v).num_elements(), 0.0)};
        args.push_back(test::BufferArg{static_cast<int>(buffers.size())});
        buffers.push_back(values[v]);
      }
      // The interpreter reads pointer arithmetic, not tensor descriptors.
      test::run_tile_ir(lower::expand_tensor_access(k.kernel).kernel, k.grid[0], args, buffers);
      for (size_t i = 0; i < k.params.size(); ++i) values[k.params[i]] = buffers[i];
    }
  return values.at(plan.graph.outputs()[0]).data;
}

void expect_close(const Matrix& got, const Matrix& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    ASSERT_NEAR(got[i], want[i], 4e-3 * (1 + std::abs(want[i]))) << what << " element " << i;
}

// M = 200 (two 128-row programs, the second ragged), K = 100 (a ragged second K step), N = 200
// (one ragged 256-column block), with a residual epilogue.
TEST(GraphWgmmaTilesNumeric, MatmulWithAResidualOnRaggedShapes) {
  const int64_t m = 200, k = 100, n = 200;
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({m, k}, "f16")), w = b.input("w", TensorSpec({k, n}, "f16"));
  Matrix xv = random_f16(m * k, 1, 1.0), wv = random_f16(k * n, 2, 0.2),
         rv = random_f16(m * n, 3, 1.0);
  Matrix plain = run_on_sm90_tiles(b.build({b.matmul(x, w)}), {{"x", xv}, {"w", wv}});
  Matrix want = product(xv, wv, m, k, n);
  expect_close(plain, want, "x @ w");
  GraphBuilder b2;
  x = b2.input("x", TensorSpec({m, k}, "f16"));
  w = b2.input("w", TensorSpec({k, n}, "f16"));
  Value r = b2.input("r", TensorSpec({m, n}, "f16"));
  Matrix fused =
      run_on_sm90_tiles(b2.build({b2.add(r, b2.matmul(x, w))}), {{"x", xv}, {"w", wv}, {"r", rv}});
  for (size_t i = 0; i < want.size(); ++i) want[i] += rv[i];
  expect_close(fused, want, "r + x @ w");
}

// The SwiGLU region with a residual: gate/up (two accumulators, 128 x 128 tiles) then the down
// projection, at 200 tokens, hidden 96 and intermediate 100 (every block ragged).
TEST(GraphWgmmaTilesNumeric, SwigluOnRaggedShapes) {
  const int64_t m = 200, hidden = 96, inter = 100;
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({m, hidden}, "f16"));
  Value w_gate = b.input("w_gate", TensorSpec({hidden, inter}, "f16"));
  Value w_up = b.input("w_up", TensorSpec({hidden, inter}, "f16"));
  Value w_down = b.input("w_down", TensorSpec({inter, hidden}, "f16"));
  Value h = b.multiply(b.silu(b.matmul(x, w_gate)), b.matmul(x, w_up));
  Graph graph = b.build({b.add(x, b.matmul(h, w_down))});
  Matrix xv = random_f16(m * hidden, 4, 1.0), gv = random_f16(hidden * inter, 5, 0.2),
         uv = random_f16(hidden * inter, 6, 0.2), dv = random_f16(inter * hidden, 7, 0.2);
  Matrix got = run_on_sm90_tiles(graph, {{"x", xv}, {"w_gate", gv}, {"w_up", uv}, {"w_down", dv}});
  Matrix gate = product(xv, gv, m, hidden, inter), up = product(xv, uv, m, hidden, inter);
  Matrix hv(gate.size());
  for (size_t i = 0; i < hv.size(); ++i)
    hv[i] = test::round_to(ir::DType::f16, gate[i] / (1 + std::exp(-gate[i])) * up[i]);
  Matrix want = product(hv, dv, m, inter, hidden);
  for (size_t i = 0; i < want.size(); ++i) want[i] += xv[i];
  expect_close(got, want, "x + swiglu(x)");
}

}  // namespace
}  // namespace metile::graph
