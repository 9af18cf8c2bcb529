// GraphBuilder: shapes and dtypes are checked where an op is added; the Graph is well formed.
#include <gtest/gtest.h>

#include "metile/graph/graph_builder.h"
#include "metile/support/errors.h"

namespace metile::graph {
namespace {

// The message of the UserError `fn` throws ("" when it throws none), without the node it
// names (", in %2 = add(%a, %c)"; graph_errors_test.cc checks that part).
template <typename Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const UserError& e) {
    std::string what = e.what();
    return what.substr(0, what.find(", in %"));
  }
  return "";
}

TEST(GraphBuilder, SeedExampleBuildsAndPrints) {
  GraphBuilder b;
  Value values = b.input("values", TensorSpec({1, 2048}, "f16"));
  Value residual = b.input("residual", TensorSpec({1, 2048}, "f16"));
  Value weight = b.input("weight", TensorSpec({2048}, "f16"));
  Value summed = b.add(values, residual);
  Value normalized = b.rms_norm(summed, weight, 1e-5);
  Graph g = b.build({summed, normalized});

  ASSERT_EQ(g.ops().size(), 2u);
  EXPECT_EQ(g.op(0).name(), "add");
  EXPECT_EQ(g.op(1).name(), "rms_norm");
  EXPECT_EQ(g.op(1).float_attr("eps"), 1e-5);
  EXPECT_EQ(g.op(1).int_attr("axis"), 1);
  EXPECT_EQ(g.spec(normalized.id), TensorSpec({1, 2048}, "f16"));
  EXPECT_EQ(g.outputs(), (std::vector<int>{summed.id, normalized.id}));
  EXPECT_EQ(g.value(summed.id).users, std::vector<int>{1});
  EXPECT_EQ(g.producers(1), std::vector<int>{0});
  EXPECT_EQ(g.str(),
            "graph {\n"
            "  %values = input : (1, 2048) f16\n"
            "  %residual = input : (1, 2048) f16\n"
            "  %weight = input : (2048,) f16\n"
            "  %3 = add(%values, %residual) : (1, 2048) f16\n"
            "  %4 = rms_norm(%3, %weight) {axis = 1, eps = 1e-05} : (1, 2048) f16\n"
            "  outputs(%3, %4)\n"
            "}\n");
}

TEST(GraphBuilder, ElementwiseBroadcastsLikeNumpy) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({4, 1, 3}, "f32"));
  Value y = b.input("y", TensorSpec({2, 1}, "f32"));
  EXPECT_EQ(b.spec(b.multiply(x, y)).shape, (Shape{4, 2, 3}));
  Value s = b.input("s", TensorSpec({1}, "f32"));
  EXPECT_EQ(b.spec(b.subtract(x, s)).shape, (Shape{4, 1, 3}));
}

TEST(GraphBuilder, ShapeErrorsNameTheOpAndShapes) {
  GraphBuilder b;
  Value a = b.input("a", TensorSpec({1, 2048}, "f16"));
  Value c = b.input("c", TensorSpec({1, 1024}, "f16"));
  Value f = b.input("f", TensorSpec({1, 2048}, "f32"));
  Value w = b.input("w", TensorSpec({1024}, "f16"));
  Value m = b.input("m", TensorSpec({64, 128}, "f16"));
  Value k = b.input("k", TensorSpec({256, 32}, "f16"));
  Value i = b.input("i", TensorSpec({8}, "i32"));
  EXPECT_EQ(error_of([&] { b.add(a, c); }), "add: shapes (1, 2048) and (1, 1024) do not broadcast");
  EXPECT_EQ(error_of([&] { b.add(a, f); }),
            "add: dtypes f16 and f32 differ (shapes (1, 2048) and (1, 2048))");
  EXPECT_EQ(error_of([&] { b.rms_norm(a, w, 1e-5); }),
            "rms_norm: weight shape (1024,) must be (2048,), the last dimension of x (1, 2048)");
  EXPECT_EQ(error_of([&] { b.rms_norm(c, w, 0.0); }), "rms_norm: eps must be positive, got 0");
  EXPECT_EQ(error_of([&] { b.matmul(m, k); }),
            "matmul: inner dimensions 128 and 256 differ in (64, 128) @ (256, 32)");
  EXPECT_EQ(error_of([&] { b.matmul(w, k); }),
            "matmul: operands need rank >= 2, got (1024,) @ (256, 32)");
  EXPECT_EQ(error_of([&] { b.softmax(a, 2); }),
            "softmax: axis 2 is out of range for shape (1, 2048)");
  EXPECT_EQ(error_of([&] { b.sum(a, -3); }), "sum: axis -3 is out of range for shape (1, 2048)");
  EXPECT_EQ(error_of([&] { b.exp(i); }), "exp: expects a floating-point tensor, got (8,) i32");
  EXPECT_EQ(error_of([&] { b.divide(i, i); }),
            "divide: expects a floating-point tensor, got (8,) i32");
  EXPECT_EQ(error_of([&] { b.causal_mask(w); }),
            "causal_mask: expects rank >= 2 (rows, columns), got shape (1024,)");
  EXPECT_EQ(error_of([&] { b.transpose(w); }), "transpose: expects rank >= 2, got shape (1024,)");
  EXPECT_EQ(error_of([&] {
              TensorSpec({2, 2}, "f64");
            }),
            "TensorSpec: unknown dtype 'f64'; expected one of f16, bf16, f32, i32");
  EXPECT_EQ(error_of([&] {
              TensorSpec({2, 0}, "f32");
            }),
            "TensorSpec: shape (2, 0) has a non-positive dimension");
}

TEST(GraphBuilder, ReductionsMatmulAndTransposeShapes) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({8, 16, 32}, "f32"));
  Value sum = b.sum(x, -1);
  Value kept = b.max(x, 1, /*keepdims=*/true);
  Value mean = b.mean(x, 0);
  EXPECT_EQ(b.spec(sum).shape, (Shape{8, 16}));
  EXPECT_EQ(b.spec(kept).shape, (Shape{8, 1, 32}));
  EXPECT_EQ(b.spec(mean).shape, (Shape{16, 32}));
  Value w = b.input("w", TensorSpec({32, 64}, "f32"));
  Value y = b.matmul(x, w);  // batch axes broadcast against a 2-D right operand
  EXPECT_EQ(b.spec(y).shape, (Shape{8, 16, 64}));
  Value flipped = b.transpose(y);
  EXPECT_EQ(b.spec(flipped).shape, (Shape{8, 64, 16}));
  Value softmax = b.softmax(b.causal_mask(b.scale(x, 0.125)), -1);
  Graph g = b.build({sum, kept, mean, softmax, flipped});
  EXPECT_EQ(g.op(g.value(sum.id).producer).int_attr("axis"),
            2);  // negative axes are stored normalised
  EXPECT_EQ(g.op(g.value(kept.id).producer).int_attr("keepdims"), 1);
}

TEST(GraphBuilder, BuildRejectsMisuse) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({4}, "f32"));
  Value e = b.exp(x);
  Value s = b.silu(x);
  EXPECT_EQ(error_of([&] { b.build({}); }), "build: a graph needs at least one output");
  EXPECT_EQ(error_of([&] { b.build({x}); }),
            "build: output %x is a graph input; outputs must be op results");
  EXPECT_EQ(error_of([&] { b.build({e, e, s}); }), "build: output %1 is listed twice");
  EXPECT_EQ(error_of([&] { b.build({s}); }),
            "build: %1 = exp(...) does not contribute to any output; list it as an output or "
            "remove it");
  EXPECT_EQ(error_of([&] { b.input("x", TensorSpec({4}, "f32")); }),
            "input: name 'x' is already used");
  EXPECT_EQ(error_of([&] { b.input("2x", TensorSpec({4}, "f32")); }),
            "input: name '2x' is not an identifier ([A-Za-z_][A-Za-z0-9_]*)");
  GraphBuilder other;
  EXPECT_EQ(error_of([&] { other.exp(x); }), "exp: the value was not made by this GraphBuilder");
  Graph g = b.build({e, s});
  EXPECT_EQ(g.ops().size(), 2u);
  b.scale(e, 2.0);  // the built graph is a copy: recording more does not change it
  EXPECT_EQ(g.ops().size(), 2u);
}

TEST(GraphBuilder, TransformerOpsCheckTheirOperands) {
  GraphBuilder b;
  Value x = b.input("x", TensorSpec({4, 6}, "f32"));
  Value ids = b.input("ids", TensorSpec({4}, "i32"));
  Value half = b.input("half", TensorSpec({4, 3}, "f32"));
  EXPECT_EQ(b.spec(b.reshape(x, {2, -1, 3})), TensorSpec({2, 4, 3}, "f32"));
  EXPECT_EQ(b.spec(b.transpose(b.reshape(x, {4, 2, 3}), 0, 1)), TensorSpec({2, 4, 3}, "f32"));
  EXPECT_EQ(b.spec(b.slice(x, -1, 1, 4)), TensorSpec({4, 3}, "f32"));
  EXPECT_EQ(b.spec(b.concat({x, half}, 1)), TensorSpec({4, 9}, "f32"));
  EXPECT_EQ(b.spec(b.rotary(x, half, half)), TensorSpec({4, 6}, "f32"));
  EXPECT_EQ(b.spec(b.embedding(x, ids)), TensorSpec({4, 6}, "f32"));
  EXPECT_EQ(b.spec(b.cast(x, DType::bf16)), TensorSpec({4, 6}, "bf16"));
  EXPECT_EQ(error_of([&] {
              b.reshape(x, {-1, -1});
            }),
            "reshape: dimensions of (-1, -1) must be positive (one may be -1)");
  EXPECT_EQ(error_of([&] { b.slice(x, 0, 2, 2); }),
            "slice: [2:2] of axis 0 of (4, 6) is empty or out of range");
  EXPECT_EQ(error_of([&] { b.concat({x}, 0); }), "concat: needs at least two operands, got 1");
  EXPECT_EQ(error_of([&] { b.rotary(half, half, half); }),
            "rotary: x must be (..., T, D) with D even, got (4, 3)");
  EXPECT_EQ(error_of([&] { b.embedding(ids, ids); }),
            "embedding: table must be a 2-D float tensor (V, H), got (4,) i32");
  EXPECT_EQ(error_of([&] { b.cache_update(x, half, ids); }),
            "cache_update: new (4, 3) f32 must be (..., T, D) with cache (4, 6) f32's batch "
            "dimensions, D and dtype, and T <= S");
}

}  // namespace
}  // namespace metile::graph
